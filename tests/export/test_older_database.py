"""A study database made by an earlier version of the toolkit (study.store.schema adds the tables,
columns and indexes it lacks): the commands that read a study's sessions without serving it
open it as `study serve`, `study status` and `study report` do, rather than stopping on
'no such column: sessions.missing_events' with a traceback."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from study.cli import main
from study.release.keys import init_keyfile
from study.store import writing
from tests.server.flow import finish, start, to_writing

# The tables and indexes of the first version's database (the skeleton, 1cc090a): the rest, and
# sessions.missing_events and sessions.within_order, came later.
FIRST_TABLES = {"sessions", "events", "suggestion_requests"}
FIRST_INDEXES = {"ix_sessions_worker_id", "ix_sessions_access_code", "suggestion_requests_by_session"}


def _as_the_first_version_left_it(engine) -> None:
    with writing(engine) as connection:
        for kind, keep in (("index", FIRST_INDEXES), ("table", FIRST_TABLES)):
            names = connection.exec_driver_sql(
                f"SELECT name FROM sqlite_master WHERE type = '{kind}' AND sql IS NOT NULL"
            ).scalars().all()
            for name in set(names) - keep:
                connection.exec_driver_sql(f'DROP {kind.upper()} "{name}"')
        for column in ("missing_events", "within_order"):
            connection.exec_driver_sql(f"ALTER TABLE sessions DROP COLUMN {column}")
    engine.dispose()


@pytest.mark.parametrize("command", ["export", "export --format proactive", "curate validate", "release build"])
def test_a_database_made_by_the_first_version_is_read_by_every_command(app, client, study_folder, tmp_path, command):
    sessions = []
    for code in ("lab-a", "lab-b"):
        sessions.append(start(client, access_code=code))
        to_writing(client, sessions[-1])
        finish(client, sessions[-1])
    _as_the_first_version_left_it(app.extensions["study.engine"])
    key = init_keyfile(tmp_path / "k.key").path
    args = {
        "export": ["export", str(study_folder), "--out", str(tmp_path / "out")],
        "export --format proactive": ["export", str(study_folder), "--format", "proactive", "--out", str(tmp_path / "out")],
        "curate validate": ["curate", "validate", str(study_folder)],
        "release build": ["release", "build", str(study_folder), "--version", "1.0.0",
                          "--out", str(tmp_path / "releases"), "--key", str(key)],
    }[command]  # fmt: skip

    result = CliRunner().invoke(main, args)

    assert result.exit_code == 0, result.output + repr(result.exception)
    if command == "export":
        with open(tmp_path / "out" / "metadata.csv", newline="") as handle:
            assert sorted(row["session_id"] for row in csv.DictReader(handle)) == sorted(sessions)
    elif command == "export --format proactive":  # a CoAuthor study has none of its sessions
        assert "Exported 0 proactive sessions" in result.output
    elif command == "curate validate":
        assert "Checked 2 sessions" in result.output and "2 valid" in result.output
    else:
        assert "2 sessions by 2 writers" in result.output


def test_survey_answers_an_earlier_version_kept_in_the_session_are_exported_and_counted(app, client, study_folder, tmp_path):
    # Before the survey engine, a session's answers to the [[survey]] questions were kept only
    # in sessions.survey: the export left them out (no survey.csv) and status counted none.
    sessions = []
    for code in ("lab-a", "lab-b"):
        sessions.append(start(client, access_code=code))
        to_writing(client, sessions[-1])
        finish(client, sessions[-1])  # native_speaker Yes, ownership 6, satisfaction 5, reuse 7
    _as_the_first_version_left_it(app.extensions["study.engine"])

    exported = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(tmp_path / "out")])
    status = CliRunner().invoke(main, ["status", str(study_folder)])
    again = CliRunner().invoke(main, ["status", str(study_folder)])  # moved once, not twice

    assert exported.exit_code == 0, exported.output
    with open(tmp_path / "out" / "survey.csv", newline="") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    assert sorted(rows) == sorted(sessions)
    assert {(row["native_speaker"], row["ownership"], row["reuse"]) for row in rows.values()} == {("Yes", "6", "7")}
    assert "Surveys (submitted, in progress): post_session 2" in status.output
    assert "Surveys (submitted, in progress): post_session 2" in again.output
