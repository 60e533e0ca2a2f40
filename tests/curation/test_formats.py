"""Session files are found, their format detected per file, and read strictly."""

from __future__ import annotations

import pytest

from study.curation.formats import (
    FORMAT_2021,
    FORMAT_INTERFACE,
    INTERFACE_KEYS,
    RELEASE_KEYS,
    SessionFileError,
    detect_format,
    read_session,
    session_files,
)  # fmt: skip

from .conftest import DATA, INTERFACE_SESSION, SESSIONS, record, small_session, write_lines


def test_release_sessions_are_the_2021_format_with_17_keys_in_order():
    session = read_session(SESSIONS / "b5f8899be4134579aa75c7625414fa25.jsonl")
    assert session.format == FORMAT_2021
    assert session.session_id == "b5f8899be4134579aa75c7625414fa25"
    assert all(tuple(event) == RELEASE_KEYS for event in session.events)
    assert session.lines[:3] == [1, 2, 3]


def test_later_interface_session_is_detected():
    session = read_session(INTERFACE_SESSION)
    assert session.format == FORMAT_INTERFACE
    assert set(session.events[0]) == set(INTERFACE_KEYS)


def test_this_projects_export_is_read_as_the_2021_format(tmp_path):
    # study.export.coauthor writes the release's 17 keys in order: indistinguishable by design.
    path = write_lines(tmp_path / "export.jsonl", small_session())
    assert read_session(path).format == FORMAT_2021


def test_detect_format_needs_exactly_one_of_eventNum_and_originalSuggestions():
    assert detect_format({"eventNum": 0}) == FORMAT_2021
    assert detect_format({"originalSuggestions": []}) == FORMAT_INTERFACE
    assert detect_format({"eventNum": 0, "originalSuggestions": []}) is None
    assert detect_format({}) is None


def test_session_files_searches_folders_recursively_and_keeps_files(tmp_path):
    assert len(session_files([DATA])) == 32
    assert session_files([SESSIONS / "b5f8899be4134579aa75c7625414fa25.jsonl"])[0].name.startswith(
        "b5f8"
    )
    with pytest.raises(FileNotFoundError, match="no such file"):
        session_files([tmp_path / "missing"])


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], r"line 1: not valid JSON"),
        (
            [record("system-initialize", "api"), "[1, 2]"],
            r"line 2: expected an event object, got list",
        ),
        ([], r"has no events"),
        ([{"eventName": "system-initialize"}], r"line 1: cannot tell the format"),
    ],
)
def test_read_session_names_file_and_line_of_the_first_problem(tmp_path, lines, message):
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(SessionFileError, match=message) as raised:
        read_session(path)
    assert "bad.jsonl" in str(raised.value)


def test_blank_lines_are_skipped_but_line_numbers_kept(tmp_path):
    events = small_session()
    path = write_lines(tmp_path / "s.jsonl", [events[0], "", events[1]])
    session = read_session(path)
    assert len(session.events) == 2
    assert session.lines == [1, 3]


def test_records_written_by_the_export_are_read_and_validated_as_the_2021_format(tmp_path):
    from study.curation.validate import validate_file
    from study.export.coauthor import _dumps, to_release_record

    source = read_session(SESSIONS / "b5f8899be4134579aa75c7625414fa25.jsonl").events
    stored = [{k: v for k, v in event.items() if k != "eventNum"} for event in source]
    path = tmp_path / "exported.jsonl"
    lines = (_dumps(to_release_record(record, i)) + b"\n" for i, record in enumerate(stored))
    path.write_bytes(b"".join(lines))
    assert read_session(path).format == FORMAT_2021
    assert path.read_bytes() == (SESSIONS / "b5f8899be4134579aa75c7625414fa25.jsonl").read_bytes()
    assert validate_file(path).ok


def test_a_chat_conversation_file_is_named_as_such_with_the_command_that_checks_it(tmp_path):
    """`study export --format chat` writes conversations.jsonl beside survey files; validate,
    stats and replay on that folder should say what the file is, not only that keys are missing."""
    from study.curation.validate import validate_file

    conversation = {"format": "study-chat-1", "session_id": "c" * 32, "messages": [], "assistant": "A"}
    path = write_lines(tmp_path / "conversations.jsonl", [conversation])
    with pytest.raises(SessionFileError, match="chat conversation .*study curate chat FILE"):
        read_session(path)
    report = validate_file(path)
    assert any("study curate chat FILE" in issue.message for issue in report.issues)
