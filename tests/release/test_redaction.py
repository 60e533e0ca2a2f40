"""Redacted logs stay replayable: same-length masks placed where each character was typed."""

from __future__ import annotations

import pytest

from study.curation.formats import read_session
from study.curation.replay import apply_delta, replay
from study.curation.suggestions import EXACT, inserted_text, match_suggestion
from study.curation.validate import validate_events
from study.release.pii import Detector, redact_text
from study.release.redaction import redact_session
from tests.conftest import COAUTHOR
from tests.release.conftest import (
    AT_ZERO,
    AWS_KEY,
    DELETED_EMAIL,
    EMAIL,
    FRAGMENTS,
    INTERFACE,
    OPENAI_KEY,
    PASTED,
    PHONE,
    PHONE_INTL,
    SMALLEST,
    SUGGESTED_EMAIL,
    TYPED_WORKER,
)
from tests.release.inject import Writer

FIXTURES = sorted((COAUTHOR / "sessions").glob("*.jsonl")) + [
    COAUTHOR / "interface-format" / f"{INTERFACE}.jsonl"
]
OTHER_WORKER = "AFXYOGWOLRAFK6"


@pytest.fixture(scope="module")
def detector():
    return Detector(known_ids=[OTHER_WORKER])


def states(events):
    """The document after every event."""
    text = ""
    for index, event in enumerate(events):
        if index == 0:
            text = event["currentDoc"]
        elif isinstance(event.get("textDelta"), dict):
            text = apply_delta(text, event["textDelta"]["ops"])
        yield text


def assert_masked_in_every_state(original, redacted):
    """Same length at every event, and differing only where a mask stands."""
    for before, after in zip(states(original), states(redacted), strict=True):
        assert len(before) == len(after)
        for a, b in zip(before, after, strict=True):
            assert a == b or b in "<>_" or b.isupper()
    for text in states(redacted):
        lowered = text.lower()
        assert not [f for f in FRAGMENTS if f.lower() in lowered]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem[:8])
def test_real_sessions_without_personal_data_are_left_unchanged(detector, path):
    session = read_session(path)
    result = redact_session(session.session_id, session.events, detector)
    assert result.redactions == [] and result.events == session.events


def test_typed_deleted_pasted_and_suggested_data_is_masked_and_the_log_replays(detector):
    writer = Writer(read_session(COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").events)
    writer.type(f" You can reach me at {EMAIL} or {PHONE}.")
    end = writer.type(f" My other mail is {DELETED_EMAIL}")
    writer.backspace(len(DELETED_EMAIL), end)
    writer.type(f"{TYPED_WORKER} ", at=writer.text.index("In my opinion,") + 3)
    writer.paste(f" key {OPENAI_KEY} and {OTHER_WORKER.lower()}.")
    writer.accept([f"Write to {SUGGESTED_EMAIL} for details.", "Nothing here."], chosen=0)
    writer.type(f" {AWS_KEY}")

    result = redact_session(SMALLEST, writer.events, detector)

    assert validate_events(result.events).errors == 0
    final = replay(result.events).text
    assert final == redact_text(replay(writer.events).text, detector)[0]
    assert_masked_in_every_state(writer.events, result.events)
    found = {(r.entity, r.original) for r in result.redactions}
    assert ("EMAIL_ADDRESS", DELETED_EMAIL) in found  # deleted again, but it was in the log
    assert ("EMAIL_ADDRESS", EMAIL) in found and ("EMAIL_ADDRESS", f"{EMAIL[:-1]}") not in found


def test_an_accepted_suggestion_still_matches_its_redacted_list_item(detector):
    writer = Writer(read_session(COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").events)
    writer.accept([f"Write to {SUGGESTED_EMAIL} for details.", "Nothing here."], chosen=0)
    result = redact_session(SMALLEST, writer.events, detector)
    opened = [e for e in result.events if e["eventName"] == "suggestion-open"][-1]
    inserted = inserted_text(result.events[-1])
    assert SUGGESTED_EMAIL not in inserted
    assert match_suggestion(inserted, opened["currentSuggestions"]) == EXACT
    assert opened["currentSuggestions"][1]["original"] == "Nothing here."


def test_data_typed_at_position_zero_and_in_pasted_sessions(detector):
    for session_id, text, at in (
        (AT_ZERO, f"Call {PHONE_INTL}. ", 0),
        (PASTED, f" Worker {OTHER_WORKER} hi.", None),
    ):
        writer = Writer(read_session(COAUTHOR / "sessions" / f"{session_id}.jsonl").events)
        writer.type(text, at=at if at is not None else len(writer.text) // 2)
        result = redact_session(session_id, writer.events, detector)
        assert validate_events(result.events).errors == 0
        assert replay(result.events).text == redact_text(replay(writer.events).text, detector)[0]
        assert_masked_in_every_state(writer.events, result.events)


def test_the_later_interface_format_is_redacted_too(detector):
    writer = Writer(read_session(FIXTURES[-1]).events)
    writer.type(f" Mail me: {EMAIL}")
    result = redact_session(INTERFACE, writer.events, detector)
    assert validate_events(result.events).errors == 0
    assert EMAIL not in replay(result.events).text
    assert_masked_in_every_state(writer.events, result.events)
