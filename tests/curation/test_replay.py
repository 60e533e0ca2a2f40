"""Replay rebuilds the text at any event and knows who wrote each character."""

from __future__ import annotations

import pytest

from study.curation.formats import read_session
from study.curation.replay import PROMPT, SUGGESTION, WRITER, DeltaError, apply_delta, replay

from .conftest import INTERFACE_SESSION, SESSIONS, ops, small_session
from .conftest import PROMPT as SMALL_PROMPT


@pytest.mark.parametrize(
    "path", sorted(SESSIONS.glob("*.jsonl")) + [INTERFACE_SESSION], ids=lambda p: p.stem[:8]
)
def test_every_real_session_replays_with_an_author_per_character(path):
    events = read_session(path).events
    document = replay(events)
    assert len(document.authors) == len(document.text)
    assert set(document.authors) <= {PROMPT, WRITER, SUGGESTION}


def test_text_at_any_event():
    events = small_session()
    assert replay(events, at=0).text == SMALL_PROMPT
    assert replay(events, at=2).text == SMALL_PROMPT + "It"
    assert replay(events, at=9).text == SMALL_PROMPT + "It Bees are busy."
    assert replay(events).text == SMALL_PROMPT + "It Bees are busy"
    assert replay(events, at=9).event_index == 9


def test_authorship_marks_prompt_writer_and_suggestion():
    document = replay(small_session())
    assert document.authors == PROMPT * len(SMALL_PROMPT) + WRITER * 2 + SUGGESTION * 14
    assert document.spans() == [("prompt", 0, 18), ("writer", 18, 20), ("suggestion", 20, 34)]
    assert document.without_prompt() == "It Bees are busy"


def test_replaced_text_takes_the_new_author():
    text, authors = apply_delta(
        "abcd", [{"retain": 1}, {"delete": 2}, {"insert": "XY"}], "PPPP", SUGGESTION
    )
    assert (text, authors) == ("aXYd", "PSSP")


def test_prompt_edits_are_removed_from_the_text_without_prompt():
    events = small_session()[:3]
    events.append(dict(events[1], textDelta=ops({"retain": 6}, {"insert": "ABOUT "}), eventNum=3))
    document = replay(events)
    assert document.text.startswith("Write ABOUT about bees.")
    assert document.without_prompt() == "ABOUT \nIt"


def test_later_interface_marks_user_logged_suggestion_inserts_as_suggestions():
    events = read_session(INTERFACE_SESSION).events
    document = replay(events)
    chosen = [span for span in document.spans() if span[0] == "suggestion"]
    assert len(chosen) >= 10
    # The first accepted suggestion (source "user" in this format) starts at 317.
    assert document.spans()[1][0] == "suggestion"


def test_out_of_range_event_and_broken_deltas_raise():
    events = small_session()
    with pytest.raises(ValueError, match="out of range"):
        replay(events, at=len(events))
    events[2]["textDelta"] = ops({"retain": 500}, {"insert": "x"})
    with pytest.raises(
        DeltaError, match=r"ops\[0\].retain 500 at position 0 runs past the end .*\(event 2\)"
    ):
        replay(events)
    with pytest.raises(ValueError, match="first event must be system-initialize"):
        replay(small_session()[1:])


@pytest.mark.parametrize(
    ("text", "ops", "expected"),
    [
        ("a😀\n", [{"retain": 3}, {"insert": "b"}], "a😀b\n"),
        ("x😀y\n", [{"retain": 1}, {"delete": 2}], "xy\n"),
        ("abc\n", [{"retain": 1}, {"insert": "😀"}, {"delete": 1}], "a😀c\n"),
        ("é\n", [{"retain": 1}, {"insert": "ü"}], "éü\n"),  # BMP accents count once
    ],
)
def test_positions_count_utf16_code_units_like_quill(text, ops, expected):
    events = [
        {"eventName": "system-initialize", "currentDoc": text, "textDelta": ""},
        {"eventName": "text-insert", "eventSource": "user", "textDelta": {"ops": ops}},
    ]
    document = replay(events)
    assert document.text == expected
    assert len(document.authors) == len(document.text)


def test_authors_stay_aligned_around_emoji():
    events = [
        {"eventName": "system-initialize", "currentDoc": "P😀\n", "textDelta": ""},
        {"eventName": "text-insert", "eventSource": "user",
         "textDelta": {"ops": [{"retain": 3}, {"insert": "🐝!"}]}},
        {"eventName": "text-insert", "eventSource": "api",
         "textDelta": {"ops": [{"retain": 6}, {"insert": "ok"}]}},
    ]  # fmt: skip
    document = replay(events)
    assert document.text == "P😀🐝!ok\n"
    assert document.authors == "PPWWSSP"
