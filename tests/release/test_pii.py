"""The Presidio detector: offline recognizers, same-length masks, no false alarms on real text."""

from __future__ import annotations

import socket

import pytest

from study.release.pii import Detector, mask, redact_text
from tests.release.conftest import AWS_KEY, EMAIL, OPENAI_KEY, PHONE, PHONE_INTL, SURVEY_WORKER


@pytest.fixture(scope="module")
def detector():
    return Detector(known_ids=["AFXYOGWOLRAFK6", "demo"])


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        (f"write to {EMAIL} today", "EMAIL_ADDRESS"),
        ("or me@lab.internal", "EMAIL_ADDRESS"),  # unknown suffix: kept, not dropped
        (f"call {PHONE} now", "PHONE_NUMBER"),
        (f"call {PHONE_INTL} now", "PHONE_NUMBER"),
        (f"my id is {SURVEY_WORKER}.", "MTURK_WORKER_ID"),
        (f"key {OPENAI_KEY}", "API_KEY"),
        (f"aws {AWS_KEY}", "API_KEY"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "API_KEY"),
        ("card 4111 1111 1111 1111", "CREDIT_CARD"),
        ("it was afxyogwolrafk6 all along", "KNOWN_WORKER_ID"),
    ],
)
def test_each_kind_of_personal_data_is_found_and_masked_in_place(detector, text, entity):
    redacted, spans = redact_text(text, detector)
    assert [s.entity for s in spans] == [entity]
    assert len(redacted) == len(text)
    span = spans[0]
    assert redacted[span.start : span.end] == mask(entity, span.end - span.start)
    assert redacted[: span.start] == text[: span.start] and redacted[span.end :] == text[span.end :]


@pytest.mark.parametrize(
    "text",
    [
        "In 2020, 45% of 1,234,567 people voted.",
        "On 12/05/2020 at 10:30 we had 192 votes.",
        "RESPONSIBILITIES are shared.",
        "Version 1.0.0 of the demonstration",
        "the demo went well",
    ],
)
def test_ordinary_prose_and_short_access_codes_are_left_alone(detector, text):
    assert redact_text(text, detector) == (text, [])


def test_masks_keep_the_length_and_say_what_was_there():
    assert mask("EMAIL_ADDRESS", 20) == "<EMAIL_____________>"
    assert mask("PHONE_NUMBER", 5) == "<___>"
    assert mask("API_KEY", 1) == "_"
    assert all(len(mask("MTURK_WORKER_ID", n)) == n for n in range(0, 40))


def test_the_detector_never_touches_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the PII detector tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    fresh = Detector()
    assert [s.entity for s in fresh.find(f"mail {EMAIL}")] == ["EMAIL_ADDRESS"]


def test_windows_find_what_the_whole_text_scan_finds(detector):
    text = ("Once upon a time " * 40) + f"{EMAIL} and {PHONE} " + ("and so on " * 60) + AWS_KEY
    whole = [(s.start, s.end, s.entity) for s in detector.find(text)]
    windowed = [(s.start, s.end, s.entity) for s in detector.find_in(text)]
    assert whole == windowed and len(whole) == 3


def test_a_range_that_starts_inside_an_entity_still_finds_all_of_it(detector):
    text = "Some words first, then " + EMAIL + " and more words after it."
    inside = text.index("@")
    spans = detector.find_in(text, inside, inside + 1)
    assert [(text[s.start : s.end], s.entity) for s in spans] == [(EMAIL, "EMAIL_ADDRESS")]
