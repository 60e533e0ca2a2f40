"""Validation: real sessions pass; every error and warning is found in a hand-made file,
reported with file, line, field and a fix."""

from __future__ import annotations

import copy

import pytest

from study.curation.validate import ERROR, WARNING, validate_events, validate_file

from .conftest import INTERFACE_SESSION, SESSIONS, ops, small_session, write_lines


@pytest.mark.parametrize(
    "path", sorted(SESSIONS.glob("*.jsonl")) + [INTERFACE_SESSION], ids=lambda p: p.stem[:8]
)
def test_real_sessions_have_no_errors(path):
    report = validate_file(path)
    assert report.ok, [issue.render() for issue in report.issues]
    assert report.events > 0


def test_the_hand_made_session_is_clean():
    report = validate_events(small_session(), "small")
    assert report.ok and report.warnings == 0


def codes(report, severity):
    return {code for (s, code) in report.counts if s == severity}


def broken(mutate) -> list:
    events = copy.deepcopy(small_session())
    return mutate(events) or events


def _renumber(events):
    for number, event in enumerate(events):
        event["eventNum"] = number
    return events


# Ways to break the small session (lines are 1-based; event i is on line i + 1).
def setting(index, key, value):
    return lambda events: events[index].__setitem__(key, value)


def replacing_line(index, text):
    return lambda events: events.__setitem__(index, text)


def keeping(*spans):
    return lambda events: _renumber([e for start, stop in spans for e in events[start:stop]])


BAD_RETAIN = ops({"retain": 90}, {"delete": 1})
WASPS = ops({"retain": 20}, {"insert": " Wasps!"})


def _string_retain(events):
    events[2]["textDelta"]["ops"][0]["retain"] = "19"


# Each hand-made error: its code -> (how to break the small session, line, field).
ERRORS = {
    "json": (replacing_line(3, "{oops"), 4, None),
    "not-object": (replacing_line(3, "[1, 2]"), 4, None),
    "schema": (_string_retain, 3, "textDelta"),
    "first-event": (keeping((1, 15)), 1, "eventName"),
    "second-initialize": (lambda e: _renumber(e + [copy.deepcopy(e[0])]), 16, "eventName"),
    "event-num": (setting(5, "eventNum", 9), 6, "eventNum"),
    "delta": (setting(10, "textDelta", BAD_RETAIN), 11, "textDelta.ops[0].retain"),
    "text-without-delta": (setting(2, "textDelta", ""), 3, "textDelta"),
    "delta-on-non-text-event": (setting(14, "textDelta", ops({"insert": "x"})), 15, "textDelta"),
    "selection-without-list": (keeping((0, 3), (7, 15)), 4, "eventName"),
    "suggestion-mismatch": (setting(9, "textDelta", WASPS), 10, "textDelta"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_each_error_is_reported_with_line_field_and_fix(tmp_path, name):
    mutate, line, field = ERRORS[name]
    code = name
    path = write_lines(tmp_path / f"{name}.jsonl", broken(mutate))
    report = validate_file(path)
    assert not report.ok
    assert code in codes(report, ERROR), [i.render() for i in report.issues]
    issue = next(i for i in report.issues if i.code == code)
    assert (issue.line, issue.field) == (line, field)
    assert issue.fix and issue.file == str(path)
    rendered = issue.render()
    assert rendered.startswith(f"{path} line {line}: ") and "\n    fix: " in rendered


def test_empty_file_is_an_error(tmp_path):
    report = validate_file(write_lines(tmp_path / "empty.jsonl", []))
    assert codes(report, ERROR) == {"empty"}


def test_unknown_format_is_an_error_and_checked_as_2021(tmp_path):
    events = small_session()
    for event in events:
        event["originalSuggestions"] = []
    report = validate_file(write_lines(tmp_path / "both.jsonl", events))
    assert {"format", "schema"} <= codes(report, ERROR)


def test_schema_message_names_the_op_and_the_value(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", broken(ERRORS["schema"][0]))
    issue = next(i for i in validate_file(path).issues if i.code == "schema")
    assert issue.render().startswith(
        f'{path} line 3: textDelta ops[0].retain must be an integer, got "19"'
    )
    assert "schemas/coauthor-2021.schema.json" in issue.fix


def test_delta_message_says_where_the_op_runs_out(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", broken(ERRORS["delta"][0]))
    issue = next(i for i in validate_file(path).issues if i.code == "delta")
    assert "90 at position 0 runs past the end of the text (length 35)" in issue.message


def test_accepted_suggestion_matching_uses_text_not_index():
    events = small_session()
    events[7]["currentSuggestionIndex"] = 4  # the index fields are unreliable in the release
    # Quill moves the leading newlines of "\n\nHoney is sweet." to the end: stripped match
    events[9]["textDelta"] = ops({"retain": 20}, {"insert": "\nHoney is sweet.\n"})
    events[10]["textDelta"] = ops({"retain": 21}, {"delete": 1})
    assert validate_events(events).ok


LOOSE = ops({"retain": 20}, {"insert": " Bees  are busy."})


def _keys_reversed(events):
    events[0] = dict(reversed(list(events[0].items())))


def _partly_accepted(events):
    # " Bees are busy" of " Bees are busy.", and the writer's delete one character earlier
    events[9]["textDelta"] = ops({"retain": 20}, {"insert": " Bees are busy"})
    events[10]["textDelta"] = ops({"retain": 33}, {"delete": 1})


# Each hand-made warning: its code -> (how to break the small session, line).
WARNINGS = {
    "timestamp-order": (setting(4, "eventTimestamp", 5), 5),
    "unanswered-query": (keeping((0, 12), (13, 15)), 12),
    "cursor-mismatch": (setting(14, "currentCursor", 500), 15),
    "selection-not-inserted": (keeping((0, 9), (11, 15)), 8),
    "suggestion-loose-match": (setting(9, "textDelta", LOOSE), 10),
    "suggestion-partial": (_partly_accepted, 10),
    "empty-suggestions": (setting(12, "currentSuggestions", []), 13),
    "event-source": (setting(14, "eventSource", "api"), 15),
    "key-order": (_keys_reversed, 1),
    "controls-changed": (setting(6, "currentTemperature", "0.2"), 7),
    "later-current-doc": (setting(6, "currentDoc", "Write about wasps.\n"), 7),
    "prompt": (setting(0, "currentDoc", "Write about bees.."), 1),
    "blank-line": (lambda events: events.insert(3, ""), 4),
    # a pasted image where "t" was typed: one character, so every later position still fits
    "embed": (setting(2, "textDelta", ops({"retain": 19}, {"insert": {"image": "data:,"}})), 3),
}


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_each_warning_is_only_a_warning(tmp_path, name):
    mutate, line = WARNINGS[name]
    report = validate_file(write_lines(tmp_path / f"{name}.jsonl", broken(mutate)))
    assert name in codes(report, WARNING), [i.render() for i in report.issues]
    assert report.ok, [i.render() for i in report.issues if i.severity == ERROR]
    assert next(i for i in report.issues if i.code == name).line == line


def test_a_broken_line_stops_delta_checks_but_not_the_rest(tmp_path):
    events = small_session()
    lines = events[:2] + ["{broken"] + events[3:]
    report = validate_file(write_lines(tmp_path / "s.jsonl", lines))
    assert codes(report, ERROR) == {"json"}  # later deltas are not blamed for the lost line


def test_repeated_issues_are_counted_but_kept_to_ten_per_code(tmp_path):
    events = small_session()
    for event in events[1:]:
        event["eventNum"] += 100
    report = validate_file(write_lines(tmp_path / "s.jsonl", events))
    assert report.counts[(ERROR, "event-num")] == len(events) - 1
    assert sum(1 for i in report.issues if i.code == "event-num") == 10


def test_interface_format_accepts_user_logged_suggestion_inserts_but_checks_them():
    from study.curation.formats import read_session

    events = read_session(INTERFACE_SESSION).events
    assert validate_events(events).ok
    chosen = next(i for i, e in enumerate(events) if e["eventName"] == "suggestion-select")
    bad = copy.deepcopy(events)
    insert = next(e for e in bad[chosen:] if e["eventName"] == "text-insert")
    insert["textDelta"]["ops"][-1]["insert"] = "something the model never offered"
    assert "suggestion-mismatch" in codes(validate_events(bad), ERROR)


def test_report_to_dict_is_plain_json():
    import json

    report = validate_events(broken(ERRORS["event-num"][0]), "s")
    data = json.loads(json.dumps(report.to_dict()))
    assert data["errors"] == 1 and data["counts"] == {"error:event-num": 1}
    assert data["issues"][0]["field"] == "eventNum"


def test_every_issue_in_the_table_is_exercised_by_a_hand_made_file_here():
    from study.curation.validate import ISSUES

    from tests.curation.test_proactive_validate import CODES as PROACTIVE

    # crash (the checker itself failing) is made by tests/curation/test_runner.py, and
    # proactive-forged (checked against a study's database) by tests/export/test_validate_study.py
    # bom and encoding (files that are not UTF-8 JSON Lines) by the test of them above
    elsewhere = {"empty", "format", "crash", "proactive-forged", "bom", "encoding"}
    assert set(ISSUES) - PROACTIVE == set(ERRORS) | set(WARNINGS) | elsewhere
    errors = {code for code, (severity, _) in ISSUES.items() if severity == ERROR}
    assert errors - PROACTIVE == set(ERRORS) | elsewhere


def test_delta_positions_are_utf16_code_units_as_in_quill():
    events = small_session()
    # "😀" is two UTF-16 code units: the next retain counts it twice.
    events[1]["textDelta"] = ops({"retain": 18}, {"insert": "😀"})
    events[2]["textDelta"] = ops({"retain": 20}, {"insert": "t"})
    events[9]["textDelta"] = ops({"retain": 21}, {"insert": " Bees are busy."})
    events[10]["textDelta"] = ops({"retain": 35}, {"delete": 1})
    report = validate_events(events)
    assert report.ok, [i.render() for i in report.issues]


def _encoded(tmp_path, name: str, events: list, encoding: str, bom: bytes = b"") -> object:
    import json

    text = "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)
    path = tmp_path / name
    path.write_bytes(bom + text.encode(encoding))
    return path


def test_a_byte_order_mark_or_another_encoding_is_named_and_the_fix_keeps_the_lines(tmp_path):
    # "repair or remove the line" would have the curator delete the prompt (a BOM is on line
    # 1) or every line holding an accented letter (a file saved as Windows-1252): the writer's
    # text. The file's encoding is at fault, and the fix says so.
    from click.testing import CliRunner

    from study.curation.cli import curate

    events = small_session()
    events[1]["textDelta"]["ops"][1]["insert"] = "é"
    with_bom = _encoded(tmp_path, "bom.jsonl", small_session(), "utf-8", b"\xef\xbb\xbf")
    latin = _encoded(tmp_path, "latin.jsonl", events, "cp1252")
    for path, said, line in ((with_bom, "byte order mark", 1), (latin, "not UTF-8", 2)):
        report = validate_file(path)
        assert not report.ok
        (issue,) = [i for i in report.issues if i.severity == ERROR]
        assert said in issue.message, issue.render()
        assert "remove the line" not in issue.fix and "UTF-8" in issue.fix, issue.render()
        assert issue.line == line and "keep the line" in issue.fix
        result = CliRunner().invoke(curate, ["stats", str(path), "--out", str(tmp_path / "s.csv")])
        assert result.exit_code == 1 and said in result.output, result.output
