"""`study curate validate` on proactive session logs (MindCopilot L1-L3)."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main as study_cli
from study.curation.replay import replay
from study.curation.validate import validate_events
from tests.curation.conftest import write_lines
from tests.curation.proactive_session import Script
from tests.garbage import toolkit_garbage

# Issue codes only proactive logs can raise (tests/curation/test_validate.py counts the rest).
CODES = {"proactive-unknown-suggestion", "proactive-span"}


def scripted() -> Script:
    s = Script()
    s.type(" It")
    s.suggest(1, " snowed all night.")
    accepted_at = s.end - len(" snowed all night.")
    s.edit(accepted_at + 8, insert="very ")  # inside the accepted span
    s.modify(1, accepted_at, len(" snowed very all night."))
    s.suggest(2, " The roads froze.", "esc")
    s.type(" Cars")
    s.suggest(3, " slid slowly.", "partial")
    s.type(" away.")
    s.suggest(4, " Nobody came.", "stale")
    s.add({**s.events[0], "eventName": "window-blur", "eventSource": "user", "currentDoc": ""})
    return s


def test_a_proactive_session_validates_and_replays_without_ghost_text():
    s = scripted()
    report = validate_events(s.events)
    assert report.format == "coauthor-proactive"
    assert report.ok and not report.issues, [i.render() for i in report.issues]
    # Only accepted text is in the document: rejected, stale and unaccepted words are not.
    assert replay(s.events).text == s.text
    assert s.text == "Write about snow. It snowed very all night. Cars slid away.\n"


def test_an_insert_that_is_not_the_suggestion_is_an_error_naming_the_line():
    s = Script()
    s.type(" It")
    s.suggest(1, " snowed.")
    s.events[-1]["textDelta"]["ops"][-1]["insert"] = " rained."
    report = validate_events(s.events)
    assert [(i.code, i.line, i.field) for i in report.issues] == [("suggestion-mismatch", 7, "textDelta")]


def test_a_modify_of_an_unknown_suggestion_or_a_wrong_span_is_reported():
    s = Script()
    s.type(" It snowed.")
    s.modify(7, 0, 3)
    s.suggest(1, " Cold.")
    s.modify(1, 0, 3)
    s.events[-1]["proactive"]["text"] = "Nope"
    codes = [(i.code, i.line) for i in validate_events(s.events).issues]
    assert codes == [("proactive-unknown-suggestion", 3), ("proactive-span", 9)]


def test_the_cli_checks_proactive_files_against_their_schema(tmp_path):
    s = scripted()
    s.events[3]["proactive"]["closeReason"] = "bored"
    path = write_lines(tmp_path / "abc.jsonl", s.events)
    result = CliRunner().invoke(study_cli, ["curate", "validate", str(path)])
    assert result.exit_code != 0
    assert "line 4" in result.output and "proactive" in result.output and "coauthor-proactive.schema.json" in result.output


def _shown_twice(paradigm: str) -> list[dict]:
    s = Script(paradigm=paradigm).type(" It")
    s.suggest(1, " snowed.", "esc")
    item = s.events[3]["currentSuggestions"][0]
    s.events[3]["currentSuggestions"] = [item, {**item, "index": 1, "original": " rained."}]
    return s.events


def test_l0_shows_a_list_and_l1_to_l3_one_suggestion():
    assert validate_events(_shown_twice("L0")).ok  # Tab's list, in a MindCopilot study
    report = validate_events(_shown_twice("L2"))
    (issue,) = [i for i in report.issues if i.code == "schema"]
    assert issue.line == 4 and "currentSuggestions must have at most 1 item" in issue.message
    assert "one ghost text at a time" in issue.message


def test_a_checked_proactive_session_leaves_nothing_for_the_garbage_collector():
    # As the core's checker (tests/curation/test_onepass.py): the pool's workers run without
    # the collector, so the extension's checks must not hold their checker in a cycle.
    events = scripted().events
    validate_events(events)
    assert toolkit_garbage(lambda: validate_events(events)) == []
