"""Per-suggestion records (spec A2.6) and CoAuthor post-editing instances (KED's validation)."""

from __future__ import annotations

from pathlib import Path

from study.curation.formats import sessions_from
from study.paradigms.proactive.curation.coauthor_instances import post_edit_instances
from study.paradigms.proactive.curation.records import suggestion_records
from tests.curation.proactive_session import Script
from tests.curation.test_proactive_validate import scripted


def test_each_suggestion_gets_its_outcome_final_text_and_the_writers_continuation():
    first, second, third, fourth = suggestion_records(scripted().events, "s1")
    assert (first.outcome, first.accepted_text, first.final_text) == (
        "accepted_modified", " snowed all night.", " snowed very all night.")
    assert first.modifications == 1 and first.edit_seconds == 3.0
    assert first.context == "Write about snow. It"
    assert (second.outcome, second.close_reason, second.reference) == ("rejected", "esc", " Cars")
    assert (third.outcome, third.accepted_text) == ("partial", " slid")
    assert (fourth.outcome, fourth.shown_at) == ("stale", None)
    assert 0 < first.progress < second.progress < third.progress <= fourth.progress == 1.0


def test_writing_on_after_an_accepted_suggestion_is_not_editing_it():
    s = Script()
    s.type(" It")
    s.suggest(1, " snowed.")
    s.type(" Then it stopped.")
    (record,) = suggestion_records(s.events)
    assert (record.outcome, record.final_text, record.edit_seconds) == ("accepted", " snowed.", None)


def test_the_final_text_is_taken_when_the_modify_window_closes():
    s = Script()
    s.type(" It")
    s.suggest(1, " snowed.")
    s.suggest(2, " Cold.", "esc")
    start = s.end - len(" snowed.")
    s.edit(start + 1, insert="X")  # after the next suggestion, within the window: counts
    s.wait(70)
    s.edit(start + 1, insert="Y")  # past the 60 s window: does not
    first, _ = suggestion_records(s.events)
    assert first.final_text == " Xsnowed."
    assert suggestion_records(s.events, window_ms=0)[0].final_text == " YXsnowed."


def test_coauthor_sessions_give_post_editing_instances_with_durations():
    sessions = list(sessions_from([Path("/work/shared/data/coauthor/sessions")]))
    instances = [i for s in sessions for i in post_edit_instances(s.events, s.session_id)]
    assert len(instances) == 74
    assert all(i.duration_seconds >= 0 and i.final != i.suggestion and i.edits >= 1 for i in instances)
    # Quill's trailing newline is not part of the span: writing on after it is not an edit.
    assert not any(i.final == i.suggestion.rstrip("\n") + " " for i in instances)
