"""Quill Delta ops on plain text, counted in UTF-16 code units as the browser counts them."""

from __future__ import annotations

import pytest

from study.delta import DeltaError, apply_ops, replay


@pytest.mark.parametrize(
    ("text", "ops", "expected"),
    [
        ("abc\n", [{"retain": 3}, {"insert": "d"}], "abcd\n"),
        ("abc\n", [{"insert": "X"}], "Xabc\n"),  # no leading retain: an edit at position 0
        ("abc\n", [{"retain": 1}, {"delete": 2}], "a\n"),
        ("abc\n", [{"retain": 1}, {"delete": 1}, {"insert": "Z", "attributes": {"bold": True}}], "aZc\n"),
        # An emoji is two UTF-16 code units: positions after it shift by one against Python's.
        ("a😀\n", [{"retain": 3}, {"insert": "b"}], "a😀b\n"),
        ("x😀y\n", [{"retain": 1}, {"delete": 2}], "xy\n"),
        ("abc\n", [{"retain": 1}, {"insert": "😀"}, {"delete": 1}], "a😀c\n"),
        ("é\n", [{"retain": 1}, {"insert": "ü"}], "éü\n"),  # BMP accents count once
    ],
)
def test_ops_apply_as_in_the_browser(text, ops, expected):
    assert apply_ops(text, ops) == expected


@pytest.mark.parametrize("ops", [[{"retain": 9}], [{"retain": 2}, {"delete": 5}], [{"bogus": 1}]])
def test_ops_that_do_not_fit_the_text_are_errors(ops):
    with pytest.raises(DeltaError):
        apply_ops("abc\n", ops)


def test_replay_starts_from_the_initial_document():
    records = [
        {"eventName": "system-initialize", "currentDoc": "Prompt.\n", "textDelta": ""},
        {"eventName": "text-insert", "textDelta": {"ops": [{"retain": 7}, {"insert": " Hi"}]}},
        {"eventName": "cursor-backward", "textDelta": ""},
        {"eventName": "text-delete", "textDelta": {"ops": [{"retain": 9}, {"delete": 1}]}},
    ]
    assert replay(records) == "Prompt. H\n"
