"""`study curate stats --validate`: one pass that prints what `stats` and `validate` print."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from study.curation.cli import curate
from study.curation.onepass import check_and_measure
from study.curation.validate import validate_file

from tests.garbage import toolkit_garbage

from .conftest import PROMPT, SESSIONS, ops, record, small_session, write_lines


def run(*args):
    return CliRunner().invoke(curate, [str(a) for a in args], catch_exceptions=False)


def test_one_pass_on_the_real_sessions_prints_the_rows_of_stats_and_the_report_of_validate():
    stats = run("stats", SESSIONS, "--no-progress")
    validate = run("validate", SESSIONS, "--no-progress")
    both = run("stats", SESSIONS, "--validate", "--no-progress")

    assert both.exit_code == 0 == stats.exit_code == validate.exit_code
    assert both.stdout == stats.stdout
    assert len(both.stdout.splitlines()) == 1 + len(list(SESSIONS.glob("*.jsonl")))
    assert both.stderr == validate.stdout
    assert "Checked 31 sessions (35,346 events): 31 valid" in both.stderr
    assert "warning unanswered-query: 47 in 11 sessions, the first 3" in both.stderr


def test_a_broken_file_is_named_with_its_line_skipped_by_stats_and_fails_the_run(tmp_path):
    write_lines(tmp_path / "good.jsonl", small_session())
    broken = small_session()
    broken[2] = "{not json"
    write_lines(tmp_path / "broken.jsonl", broken)
    # Parses, but breaks the schema: validate errs, stats still measures it.
    odd = small_session()
    odd[3]["eventTimestamp"] = "soon"
    write_lines(tmp_path / "odd.jsonl", odd)

    stats = run("stats", tmp_path, "--no-progress", "-j", "1")
    validate = run("validate", tmp_path, "--no-progress", "-j", "1")
    both = run("stats", tmp_path, "--validate", "--no-progress", "-j", "1")

    assert both.exit_code == 1
    assert both.stdout == stats.stdout
    rows = both.stdout.splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["good", "odd"]
    # stats's message for the file it skips, then validate's whole report.
    assert both.stderr == stats.stderr + validate.stdout
    assert f"skipped {tmp_path / 'broken.jsonl'}" in both.stderr
    assert f"{tmp_path / 'broken.jsonl'} line 3: not valid JSON" in both.stderr
    assert f"{tmp_path / 'broken.jsonl'} line 3: is not valid JSON" in both.stderr
    assert f"{tmp_path / 'odd.jsonl'} line 4: eventTimestamp" in both.stderr
    assert "Checked 3 sessions" in both.stderr and "2 with errors" in both.stderr


def test_the_report_of_one_pass_is_validates_report_with_every_issue_kept(tmp_path):
    session = small_session()
    session[5]["eventTimestamp"] = 0  # goes back in time: a warning
    path = write_lines(tmp_path / "s.jsonl", session)
    report, (row, problem) = check_and_measure(path, "paper", keep=None)
    assert json.dumps(report.to_dict()) == json.dumps(validate_file(path, keep=None).to_dict())
    assert problem is None and row["num_event"] == len(session)


def test_one_pass_checks_the_text_the_log_gives_when_the_statistics_replay_parts_from_it(tmp_path):
    # The pass lends the validator its statistics replay's text for keystrokes. A delta on a
    # suggestion-open is applied by the validator (and reported) but skipped by the replay,
    # so from there on the validator must keep its own text: the writer's cursor at its end is
    # no mismatch.
    p = len(PROMPT)
    report = _after_it(tmp_path, [
        record("suggestion-open", "api", delta=ops({"retain": p + 2}, {"insert": "XYZ"})),
        record("text-insert", delta=ops({"retain": p}, {"insert": "!"}), currentCursor=p + 1),
        record("cursor-forward", currentCursor=p + 6),
    ])  # fmt: skip

    codes = {issue.code for issue in report.issues}
    assert "delta-on-non-text-event" in codes and "cursor-mismatch" not in codes


def test_one_pass_checks_the_cursor_against_the_text_a_deletion_left(tmp_path):
    # The pass lends the validator its replay's text for a deleted character as for a typed
    # one: a cursor at the end of the shortened text is fine, one past it is a mismatch.
    p = len(PROMPT)
    report = _after_it(tmp_path, [
        record("text-delete", delta=ops({"retain": p + 1}, {"delete": 1}), currentCursor=p + 1),
        record("cursor-forward", currentCursor=p + 2),
    ])  # fmt: skip

    assert [(issue.code, issue.line) for issue in report.issues] == [("cursor-mismatch", 5)]


def _after_it(tmp_path, records: list[dict]):
    """The one pass's report of a session that types "It" after the prompt and then logs
    `records`, which must be `validate`'s report of the same file."""
    session = small_session()[:3] + records  # the prompt, then "It"
    for number, event in enumerate(session):
        event["eventNum"], event["eventTimestamp"] = number, 1_000_000 + 1000 * number
    path = write_lines(tmp_path / "s.jsonl", session)
    report, _ = check_and_measure(path, "paper", keep=None)
    assert json.dumps(report.to_dict()) == json.dumps(validate_file(path, keep=None).to_dict())
    return report


def test_curating_a_session_loads_no_part_of_the_study_database():
    # Each of the pool's workers pays for what the paradigms' log hooks import at its first
    # session: the export's and the chat store's imports (SQLAlchemy) cost 0.3 s of CPU each.
    session = sorted(SESSIONS.glob("*.jsonl"))[0]
    shown = subprocess.run(
        [sys.executable, "-c",
         "import sys; from study.curation.onepass import check_and_measure; "
         f"check_and_measure({str(session)!r}, 'paper'); "
         "print(sorted(m for m in ('sqlalchemy', 'study.store') if m in sys.modules))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout.strip() == "[]"


def test_a_session_saved_with_windows_line_endings_is_checked_and_measured_as_the_original(tmp_path):
    original = sorted(SESSIONS.glob("*.jsonl"))[0]
    windows = tmp_path / original.name
    windows.write_bytes(original.read_bytes().replace(b"\n", b"\r\n"))

    report, (row, problem) = check_and_measure(windows, "paper")
    expected_report, (expected_row, _) = check_and_measure(original, "paper")

    assert problem is None and row == expected_row
    assert report.events == expected_report.events and report.counts == expected_report.counts


def test_a_checked_session_leaves_nothing_for_the_garbage_collector():
    # The pool's workers run without the collector (study.curation.runner): a session's checker
    # caught in a reference cycle (it held its own bound method) stayed in memory, with its text,
    # until the worker ended: 18 MB more per worker over the release.
    # Only the toolkit's own objects are counted (tests/garbage.py).
    session = sorted(SESSIONS.glob("*.jsonl"))[0]
    check_and_measure(session, "paper")
    assert toolkit_garbage(lambda: check_and_measure(session, "paper")) == []
