"""Every oddity listed in ../shared/data/coauthor/edge_cases.csv, on its real session."""

from __future__ import annotations

from study.curation.blocks import block_counts
from study.curation.formats import read_session
from study.curation.metadata import official_metadata
from study.curation.replay import replay
from study.curation.stats import session_stats
from study.curation.validate import WARNING, validate_file

from .conftest import SESSIONS, edge_cases

CASES = edge_cases()


def path(why: str):
    return SESSIONS / f"{CASES[why]}.jsonl"


def test_every_listed_edge_case_has_a_test_here():
    tested = {
        "smallest session", "suggestion-get without a following suggestion-open",
        "Quill ops carrying formatting attributes (pasted text)", "suggestion-reopen",
        "non-monotonic timestamps", "a delta without a leading retain (edit at position 0)",
        "no queries at all",
    }  # fmt: skip
    assert set(CASES) == tested


def test_smallest_session_is_complete():
    report = validate_file(path("smallest session"))
    assert report.ok and report.warnings == 0 and report.events == 302
    row = session_stats(read_session(path("smallest session")))
    assert row["num_query"] == row["num_selected"] == row["blocks_choose"] == 6


def test_unanswered_get_is_a_warning_and_not_a_query():
    report = validate_file(path("suggestion-get without a following suggestion-open"))
    assert report.ok
    assert report.counts[(WARNING, "unanswered-query")] == 5
    events = read_session(path("suggestion-get without a following suggestion-open")).events
    gets = sum(e["eventName"] == "suggestion-get" for e in events)
    assert official_metadata(events)["num_query"] == gets - 5
    assert block_counts(events)["unmatched"] >= 5


def test_formatting_attributes_are_ignored_by_replay():
    events = read_session(path("Quill ops carrying formatting attributes (pasted text)")).events
    assert any("attributes" in op for e in events if e["textDelta"] for op in e["textDelta"]["ops"])
    assert validate_file(path("Quill ops carrying formatting attributes (pasted text)")).ok
    assert "\ufffc" not in replay(events).text  # attributes never become text


def test_reopen_is_its_own_block_and_the_reopened_list_is_matched():
    events = read_session(path("suggestion-reopen")).events
    assert block_counts(events)["reopen"] == 1
    report = validate_file(path("suggestion-reopen"))
    assert report.ok  # the suggestion chosen after reopening matches the last shown list


def test_non_monotonic_timestamps_are_a_warning_and_time_uses_first_and_last_line():
    report = validate_file(path("non-monotonic timestamps"))
    assert report.ok and report.counts[(WARNING, "timestamp-order")] == 1
    issue = next(i for i in report.issues if i.code == "timestamp-order")
    assert issue.field == "eventTimestamp" and "goes back" in issue.message
    assert official_metadata(read_session(path("non-monotonic timestamps")).events)["time"] == 11.63


def test_delta_without_leading_retain_edits_at_position_0():
    events = read_session(path("a delta without a leading retain (edit at position 0)")).events
    first_ops = [e for e in events if e["textDelta"] and "retain" not in e["textDelta"]["ops"][0]]
    assert first_ops
    # Event 21 deletes the first 89 characters; event 98 inserts a title at position 0.
    for event in first_ops:
        number = event["eventNum"]
        before, after = replay(events, at=number - 1).text, replay(events, at=number).text
        op = event["textDelta"]["ops"][0]
        if "delete" in op:
            assert after == before[op["delete"] :]
        else:
            assert after == op["insert"] + before
    assert validate_file(path("a delta without a leading retain (edit at position 0)")).ok


def test_session_without_queries_has_zero_acceptance_and_no_machine_turns():
    row = session_stats(read_session(path("no queries at all")))
    assert row["num_query"] == row["perc_selected"] == row["blocks_choose"] == 0
    assert row["equality"] == 0 and row["writer_share_final"] == 100
    assert row["written_by_human"] == 100
