"""One poisoned session must not block every release: a clear error names it, and
`study release build --exclude SESSION` leaves it out."""

from __future__ import annotations

import csv
import json
import time

import pytest
from click.testing import CliRunner

from study import config
from study.release.cli import release
from study.release.keys import init_keyfile
from study.store import create_tables, make_engine, writing
from study.store.db import events
from tests.release.conftest import SMALLEST, copy_source
from tests.review.sessions import confirm_by_sync, finished_session

STORY = [("W", " She met him again."), ("W", " He smiled, and she knew."), ("W", " The end.")]


@pytest.fixture
def poisoned_study(study_folder):
    """A study with two finished sessions; the second holds an event stored before the server
    checked that batches replay (`retain: 1000000000`)."""
    study = config.load(study_folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    good = finished_session(engine, worker_id="A1GOODWRITER01", prompt_code="shapeshifter",
                            script=STORY)  # fmt: skip
    bad = finished_session(engine, worker_id="A1POISONED0002", prompt_code="shapeshifter",
                           script=STORY)  # fmt: skip
    for worker_id in ("A1GOODWRITER01", "A1POISONED0002"):
        confirm_by_sync(engine, worker_id)
    record = {
        "eventName": "text-insert", "eventSource": "user", "eventTimestamp": 1_700_000_900_000,
        "textDelta": {"ops": [{"retain": 1_000_000_000}, {"insert": "x"}]}, "cursorRange": "",
        "currentDoc": "", "currentCursor": 0, "currentSuggestions": [],
        "currentSuggestionIndex": 0, "currentHoverIndex": "",
    }  # fmt: skip
    with writing(engine) as connection:
        connection.execute(
            events.insert().values(
                session_id=bad, seq=999, event_name="text-insert",
                event_timestamp=record["eventTimestamp"], record=json.dumps(record),
                received_at=time.time(),
            )
        )  # fmt: skip
    engine.dispose()
    return study_folder, good, bad


def build(source, tmp_path, *extra):
    key = tmp_path / "study.key"
    if not key.exists():
        init_keyfile(key)
    return CliRunner().invoke(
        release,
        ["build", str(source), "--version", "1.0.0", "--out", str(tmp_path / "out"),
         "--key", str(key), "-j", "1", *extra],
    )  # fmt: skip


def test_a_poisoned_session_is_named_with_the_way_out(poisoned_study, tmp_path):
    folder, good, bad = poisoned_study
    result = build(folder, tmp_path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    assert bad in result.output and good not in result.output
    assert "retain" in result.output
    assert f"--exclude {bad}" in result.output
    assert not (tmp_path / "out" / "coauthor-1.0.0").exists()


def test_exclude_leaves_the_poisoned_session_out(poisoned_study, tmp_path):
    folder, good, bad = poisoned_study
    result = build(folder, tmp_path, "--exclude", bad)
    assert result.exit_code == 0, result.output
    assert "Left out 1 session(s) you excluded" in result.output
    (directory,) = (tmp_path / "out").glob("*-1.0.0")
    with open(directory / "metadata.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1
    released = {p.name for p in (directory / "sessions").iterdir()}
    assert len(released) == 1
    assert bad not in "".join(released) and not any(
        bad.encode() in p.read_bytes() for p in directory.rglob("*") if p.is_file()
    )


def test_exclude_is_repeatable_and_refuses_unknown_sessions(poisoned_study, tmp_path):
    folder, good, bad = poisoned_study
    result = build(folder, tmp_path, "--exclude", bad, "--exclude", "nosuchsession")
    assert result.exit_code == 1
    assert "--exclude nosuchsession: no such session" in result.output
    result = build(folder, tmp_path, "--exclude", bad, "--exclude", good)
    assert result.exit_code == 1 and "no sessions to release" in result.output


def test_a_metadata_row_whose_log_is_missing_names_the_fix_and_exclude_leaves_it_out(key, tmp_path):
    # A copy of the CoAuthor folder that lost one log: the build names it and how to go on, and
    # the --exclude it prints is accepted (before, the session was "no such session").
    other = "88daaed513824fbd9c77746eec7862d9"
    source = copy_source(tmp_path / "coauthor", [SMALLEST, other])
    (source / "sessions" / f"{SMALLEST}.jsonl").unlink()
    out = tmp_path / "releases"
    command = ["build", str(source), "--version", "1.0.0", "--out", str(out), "--key", str(key.path), "-j", "1"]

    refused = CliRunner().invoke(release, command)
    assert refused.exit_code == 1, refused.output
    assert f"{source / 'metadata.csv'}: 1 session(s) have no file in {source / 'sessions'}" in refused.output
    assert f"Fix: copy the missing logs into {source / 'sessions'}" in refused.output
    assert f"--exclude {SMALLEST}" in refused.output
    assert not out.exists() or not any(out.iterdir())

    built = CliRunner().invoke(release, [*command, "--exclude", SMALLEST])
    assert built.exit_code == 0, built.output
    assert f"Left out 1 session(s) you excluded: {SMALLEST}." in built.output
    with open(out / "coauthor-1.0.0" / "metadata.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 1
