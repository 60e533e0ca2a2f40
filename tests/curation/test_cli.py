"""`study curate ...` run end to end on the fixtures and on broken files."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from study.curation.cli import curate

from .conftest import DATA, SESSIONS, small_session, write_lines

SMALLEST = SESSIONS / "b5f8899be4134579aa75c7625414fa25.jsonl"


def run(*args):
    return CliRunner().invoke(curate, [str(a) for a in args], catch_exceptions=False)


def test_validate_real_sessions_exits_0_with_a_summary_table_and_the_first_few_of_each():
    result = run("validate", DATA, "--no-progress", "-j", "2")
    assert result.exit_code == 0, result.output
    assert "Checked 32 sessions (37,515 events): 32 valid, 0 with errors" in result.output
    # the table: one row per kind of issue, with sessions and occurrences
    assert "warning   unanswered-query        11           47" in result.output
    assert "warning   timestamp-order          2            2" in result.output
    # the first three of the 47, not all of them
    assert "warning unanswered-query: 47 in 11 sessions, the first 3" in result.output
    assert result.output.count("suggestion-get is not answered") == 3
    assert "line 549: eventName suggestion-get is not answered" not in result.output
    assert "--verbose" in result.output


def test_validate_verbose_lists_every_issue_with_its_fix():
    result = run("validate", DATA, "--no-progress", "--verbose")
    assert result.exit_code == 0
    assert result.output.count("suggestion-get is not answered") == 47
    assert "line 549: eventName suggestion-get is not answered" in result.output
    assert result.output.count("fix: none needed: writers press tab again") == 47
    assert "warning   unanswered-query        11           47" in result.output


def test_validate_verbose_keeps_more_than_ten_of_a_kind_per_file(tmp_path):
    events = small_session()
    for event in events[1:]:
        event["eventNum"] += 100
    write_lines(tmp_path / "s.jsonl", events)
    assert run("validate", tmp_path).output.count("expected") == 3
    assert run("validate", tmp_path, "-v").output.count("expected") == len(events) - 1


def test_validate_exits_1_when_a_session_has_an_error(tmp_path):
    events = small_session()
    events[3]["eventNum"] = 7
    write_lines(tmp_path / "bad.jsonl", events)
    write_lines(tmp_path / "good.jsonl", small_session())
    result = run("validate", tmp_path)
    assert result.exit_code == 1
    assert "error event-num: 1 in 1 session\n" in result.output
    assert (
        f"  {tmp_path / 'bad.jsonl'} line 4: eventNum is 7, expected 3 (the line order)\n"
        "  fix: renumber eventNum" in result.output
    )
    assert "1 valid, 1 with errors" in result.output
    assert "error     event-num         1            1" in result.output
    verbose = run("validate", tmp_path, "--verbose").output
    assert (
        f"error: {tmp_path / 'bad.jsonl'} line 4: eventNum is 7, expected 3 (the line order)"
        in verbose
    )


def test_validate_json_is_one_document(tmp_path):
    events = small_session()
    events[4]["eventTimestamp"] = 0
    write_lines(tmp_path / "s.jsonl", events)
    result = run("validate", tmp_path / "s.jsonl", "--format", "json")
    data = json.loads(result.output)
    assert result.exit_code == 0
    assert data["summary"]["sessions"] == 1 and data["summary"]["with_warnings"] == 1
    assert data["summary"]["issues"] == [
        {"severity": "warning", "code": "timestamp-order", "sessions": 1, "occurrences": 1}
    ]
    assert data["sessions"][0]["issues"][0]["code"] == "timestamp-order"
    assert json.loads(run("validate", tmp_path / "s.jsonl", "--json").output) == data


def test_no_warnings_hides_them_from_the_listing_only(tmp_path):
    events = small_session()
    events[4]["eventTimestamp"] = 0
    write_lines(tmp_path / "s.jsonl", events)
    result = run("validate", tmp_path, "--no-warnings")
    assert "goes back" not in result.output and "timestamp-order" in result.output


def test_validate_needs_session_files(tmp_path):
    result = run("validate", tmp_path)
    assert result.exit_code != 0 and "no .jsonl session files" in result.output


def test_replay_prints_text_at_an_event_and_marks_authors(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", small_session())
    assert run("replay", path, "--at", "2").output == "Write about bees.\nIt\n"
    marked = run("replay", path, "--authors", "--mark", "tags").output
    assert marked == (
        "[prompt]Write about bees.\n[/prompt][writer]It[/writer]"
        "[suggestion] Bees are busy[/suggestion]\n"
    )
    spans = json.loads(run("replay", path, "--json").output)["spans"]
    assert [s["author"] for s in spans] == ["prompt", "writer", "suggestion"]
    result = run("replay", path, "--at", "99")
    assert result.exit_code != 0 and "out of range" in result.output


def test_replay_of_a_file_cut_short_names_it_once_with_its_last_line_and_the_fix(tmp_path):
    # A copy that stopped mid-line: the last line is half a record, with no newline.
    data = SMALLEST.read_bytes().rstrip(b"\n")
    path = tmp_path / SMALLEST.name
    path.write_bytes(data[:-40])
    for command in ("replay", "blocks"):
        result = run(command, path)
        assert result.exit_code == 1
        message = result.output.removeprefix("Error: ")
        assert message.startswith(f"{path} line 302: not valid JSON"), message
        assert message.count(str(path)) == 2  # once where, once in the validate command to run
        assert "Fix: repair or remove the line (the file ends inside it" in message
        assert f"`study curate validate {path}` lists every problem" in message


def test_replay_of_a_delta_that_does_not_fit_names_its_line_and_the_fix(tmp_path):
    events = [json.loads(line) for line in SMALLEST.read_text().splitlines()]
    index = next(i for i, e in enumerate(events) if e["eventName"] == "text-insert" and i > 50)
    events[index]["textDelta"] = {"ops": [{"retain": 100000}, {"insert": "x"}]}
    path = write_lines(tmp_path / "s.jsonl", events)
    result = run("replay", path)
    assert result.exit_code == 1
    assert f"{path} line {index + 1}: textDelta.ops[0].retain 100000" in result.output
    assert "Fix: restore the original log" in result.output
    assert run("replay", path, "--at", index - 1).exit_code == 0  # the text before it still replays

def test_blocks_lists_blocks_and_scores():
    result = run("blocks", SMALLEST)
    assert result.exit_code == 0
    assert "init      events 0" in result.output.splitlines()[0]
    assert "equality" in result.output and "(paper sets)" in result.output
    data = json.loads(run("blocks", SMALLEST, "--json", "--mutuality-sets", "prose").output)
    assert data["counts"]["choose"] == 6 and data["blocks"][0]["name"] == "init"


def test_stats_writes_csv_and_a_summary_with_metadata_found_next_to_the_sessions(tmp_path):
    out = tmp_path / "stats.csv"
    result = run("stats", SESSIONS, "--out", out, "--summary", "genre", "-j", "2")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    metadata = pd.read_csv(DATA / "metadata.csv")
    merged = frame.merge(metadata, on="session_id", suffixes=("", "_released"))
    assert len(merged) == 31
    for column in (
        "num_event",
        "num_query",
        "num_selected",
        "perc_selected",
        "num_cursor",
        "time",
        "written_by_human",
    ):
        assert (merged[column] == merged[f"{column}_released"]).all(), column
    assert "argumentative" in result.output and "combined" in result.output


def test_stats_parquet_and_stdout(tmp_path):
    out = tmp_path / "stats.parquet"
    assert run("stats", SMALLEST, "--out", out).exit_code == 0
    assert pd.read_parquet(out)["num_event"].tolist() == [302]
    result = run("stats", SMALLEST)
    assert result.output.splitlines()[0].startswith("session_id,format,num_event")


def test_stats_skips_unreadable_sessions_and_exits_1(tmp_path):
    write_lines(tmp_path / "good.jsonl", small_session())
    write_lines(tmp_path / "bad.jsonl", ["{broken"])
    result = run("stats", tmp_path, "--out", tmp_path / "s.csv")
    assert result.exit_code == 1
    assert "bad.jsonl line 1: not valid JSON" in result.output
    assert len(pd.read_csv(tmp_path / "s.csv")) == 1


def test_summary_without_metadata_asks_for_it(tmp_path):
    write_lines(tmp_path / "good.jsonl", small_session())
    result = run("stats", tmp_path / "good.jsonl", "--summary", "genre")
    assert result.exit_code != 0 and "--metadata" in result.output


@pytest.mark.parametrize("name", ["stats.csv", "stats.parquet"])
def test_stats_out_in_a_missing_folder_is_refused_naming_the_option_and_folder(tmp_path, name):
    # Parquet is written after the last session: the mistake must not surface as a traceback
    # once the whole corpus has been measured.
    out = tmp_path / "no-such-folder" / name
    result = CliRunner().invoke(curate, ["stats", str(SMALLEST), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "--out" in result.output and str(out.parent) in result.output
    assert "does not exist" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_interrupted_stats_run_leaves_the_previous_out_file_whole(tmp_path, monkeypatch, suffix):
    # Ctrl-C (or any crash) half-way through a corpus must not leave a stats file that reads
    # as complete with a tail of sessions missing, nor truncate the last good one.
    import study.curation.cli as cli

    out = tmp_path / f"stats{suffix}"
    assert run("stats", SESSIONS, "--out", out, "-j", "1").exit_code == 0
    before = out.read_bytes()
    measure = cli.stats_paths

    def interrupted(files, sets, **options):
        for number, measured in enumerate(measure(files, sets, **options)):
            if number == 5:
                raise KeyboardInterrupt
            yield measured

    monkeypatch.setattr(cli, "stats_paths", interrupted)
    result = CliRunner().invoke(curate, ["stats", str(SESSIONS), "--out", str(out), "-j", "1"])
    assert isinstance(result.exception, KeyboardInterrupt) or result.exit_code != 0
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no partial file left


def test_a_session_named_twice_is_measured_once():
    # A folder and a file in it, as a curator adding "the one I fixed" to a run over the folder.
    result = run("stats", SESSIONS, SMALLEST, SESSIONS / ".." / "sessions" / SMALLEST.name, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()[1:]
    assert len(rows) == len(list(SESSIONS.glob("*.jsonl")))
    assert sum(row.startswith(SMALLEST.stem) for row in rows) == 1
