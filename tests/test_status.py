"""`study status`: a researcher sees how the study is going without opening the database."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import threading
import time
from contextlib import closing

import pytest

from click.testing import CliRunner

from study.cli import main
from study.store import group_commit, writing
from study.store.db import suggestion_requests
from tests.read_only import read_only
from tests.server.flow import finish, post_init, start, to_writing


def test_status_counts_sessions_conditions_events_and_suggestion_failures(client, app, study_folder):
    done = start(client, access_code="a")
    to_writing(client, done, prompt="pig")
    finish(client, done)  # stores one event
    writing_now = start(client, access_code="b")
    to_writing(client, writing_now, prompt="pig")
    start(client, access_code="c")
    with writing(app.extensions["study.engine"]) as connection:
        for latency, error in ((800.0, None), (1200.0, None), (15000.0, "timed out")):
            connection.execute(suggestion_requests.insert().values(
                session_id=writing_now, created_at=0.0, condition="creative-high", model="m",
                parameters="{}", raw="[]", suggestions=json.dumps([]), latency_ms=latency,
                error=error,
            ))  # fmt: skip

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 0, result.output
    assert "Sessions: 3 (consent 1, writing 1, complete 1)" in result.output
    assert "creative-low 1, creative-high 1, argumentative-low 0" in result.output
    assert "Events stored: 1" in result.output
    assert "Suggestion requests: 3, failed 1 (33%), median latency 1000 ms" in result.output


def test_status_names_why_suggestions_failed(client, app, study_folder):
    session_id = start(client, access_code="a")
    to_writing(client, session_id, prompt="pig")
    reasons = ["cannot reach the model endpoint at http://10.0.0.5:8001/v1; is it running?"] * 2 + [
        "the model endpoint did not answer within 15 s (http://10.0.0.5:8001/v1)"
    ]
    with writing(app.extensions["study.engine"]) as connection:
        for reason in reasons:
            connection.execute(suggestion_requests.insert().values(
                session_id=session_id, created_at=0.0, condition="creative-high", model="m",
                parameters="{}", raw="[]", suggestions="[]", latency_ms=1.0, error=reason,
            ))  # fmt: skip

    output = CliRunner().invoke(main, ["status", str(study_folder)]).output

    assert f"failed 2x: {reasons[0]}" in output
    assert f"failed 1x: {reasons[2]}" in output


def test_status_shows_how_many_event_batches_waited_at_once_for_the_database(app, study_folder):
    engine = app.extensions["study.engine"]
    writers = []
    for code in ("q1", "q2", "q3"):
        client = app.test_client()
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt="pig")
        writers.append((client, session_id))
    # A write in progress (a slow group) that the three writers' first batches queue behind.
    entered, release = threading.Event(), threading.Event()

    def slow(_connection):
        entered.set()
        release.wait(10)
        yield [("SELECT 1", ())]

    holder = threading.Thread(target=group_commit.run_staged, args=(engine, slow, "holder"))
    holder.start()
    assert entered.wait(10)
    posts = [threading.Thread(target=post_init, args=writer) for writer in writers]
    for post in posts:
        post.start()
    deadline = time.monotonic() + 10
    while len(group_commit._queue(engine).waiting) < len(writers) and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    for thread in (holder, *posts):
        thread.join(10)
    # The next request ends this process's interval, and its row is written once it is answered.
    app.extensions["study.activity"].seconds = 0
    with writers[0][0].get("/healthz"):
        pass

    output = CliRunner().invoke(main, ["status", str(study_folder)]).output

    assert "(3 event batches, 0 asking the model)" in output, output
    assert "database queue: at most 3 event batches waited at once behind a write in progress" in output


def test_status_of_a_study_whose_database_server_is_down_names_it_and_the_fix(study_folder):
    toml = study_folder / "study.toml"
    # Nothing listens on port 1: the PostgreSQL server the study names is not running.
    toml.write_text(toml.read_text().replace('database = ""', 'database = "postgresql+psycopg://study:s3cret@127.0.0.1:1/study"', 1))

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "127.0.0.1" in result.output and "[study] database" in result.output and "Fix:" in result.output
    assert "s3cret" not in result.output


def test_status_never_shows_a_database_password_given_in_the_url_s_query(study_folder):
    # libpq (and so psycopg) also takes the password, and the client key's, as parameters:
    # postgresql://study@host/db?password=..., a form hosting services print.
    url = "postgresql+psycopg://study@127.0.0.1:1/study?sslmode=prefer&password=s3cret&sslpassword=k3y"
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 1, result.output
    assert "127.0.0.1" in result.output and "sslmode=prefer" in result.output and "Fix:" in result.output
    assert "s3cret" not in result.output and "k3y" not in result.output


def test_status_of_a_study_whose_database_file_is_damaged_names_it_and_the_fix(study_folder):
    (study_folder / "study.db").write_bytes(b"not a database, e.g. a half-copied file" * 200)

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "study.db" in result.output and "Fix:" in result.output


def test_status_of_a_study_never_served_says_so_and_makes_no_database(study_folder):
    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 0, result.output
    assert "has not been served yet" in result.output and str(study_folder / "study.db") in result.output
    assert not (study_folder / "study.db").exists(), "an empty study.db would pass for a study nobody joined"


@pytest.fixture
def archived(client, study_folder, tmp_path):
    """A copy of the study folder, with a session, on a read-only file system (an archived
    study, a collaborator's read-only share), as a stopped server leaves it: study.db alone.
    (tests.read_only)"""
    session_id = start(client, access_code="a")
    to_writing(client, session_id, prompt="pig")
    folder = tmp_path / "archived"
    shutil.copytree(study_folder, folder, ignore=shutil.ignore_patterns("study.db*"))
    with closing(sqlite3.connect(study_folder / "study.db")) as source, closing(sqlite3.connect(folder / "study.db")) as copy:
        source.backup(copy)
    with read_only(folder):
        yield folder


@pytest.mark.parametrize("command", ["status", "export"])
def test_a_study_folder_that_cannot_be_written_is_named_and_not_called_damaged(archived, tmp_path, command):
    args = [command, str(archived)] + (["--out", str(tmp_path / "out")] if command == "export" else [])

    result = CliRunner().invoke(main, args)

    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"{archived} cannot be written" in result.output and "Fix:" in result.output, result.output
    assert "damaged" not in result.output and (archived / "study.db").stat().st_size > 0


def test_status_still_counts_sessions_of_a_condition_renamed_in_study_toml(client, study_folder):
    """Sessions stored under a condition that study.toml no longer names (renamed mid-study)
    stay in the count, under their stored name and said to be missing, as `study export`
    refuses them."""
    session_id = start(client, access_code="a")
    to_writing(client, session_id, prompt="pig")
    stored = CliRunner().invoke(main, ["status", str(study_folder)]).output
    (name,) = [part.split()[0] for part in stored.split("Conditions: ")[1].splitlines()[0].split(", ")
               if part.endswith(" 1")]  # fmt: skip
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(f'name = "{name}"', f'name = "{name}-renamed"', 1))

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 0, result.output
    conditions = result.output.split("Conditions: ")[1].splitlines()[0]
    assert f"{name}-renamed 0" in conditions
    assert f"{name} 1 (not in study.toml)" in conditions


def test_a_model_call_still_waiting_for_the_model_is_in_flight_not_failed(client, app, study_folder):
    # An operator runs `study status` during a launch: a call whose row has no outcome yet is
    # waiting for the model (its admission wrote the row, study.server.model_calls); only one
    # left from long ago is a call whose server stopped.
    from study.server.model_calls import NO_OUTCOME

    session_id = start(client, access_code="a")
    to_writing(client, session_id, prompt="pig")
    with writing(app.extensions["study.engine"]) as connection:
        for created_at in (time.time() - 2, time.time() - 12, 0.0):
            connection.execute(suggestion_requests.insert().values(
                session_id=session_id, created_at=created_at, condition="creative-high", model="m",
                parameters="{}", raw="[]", suggestions="[]", error=NO_OUTCOME,
            ))  # fmt: skip

    output = CliRunner().invoke(main, ["status", str(study_folder)]).output

    assert "Suggestion requests: 3, failed 1 (33%)" in output, output
    assert f"failed 1x: {NO_OUTCOME}" in output
    # How many wait for the model and how long the oldest has: a slow model shows as an old call.
    (calls,) = [line for line in output.splitlines() if "model calls:" in line]
    assert re.search(r"model calls: 2 in flight of 4 slots, the oldest asked 1[23] s ago,", calls), calls
    assert "waiting" not in calls


def test_with_no_model_call_in_flight_status_says_none_and_nothing_about_waiting(client, study_folder):
    # Nothing waits for a slot (past them a call is refused at once), so the line never counts
    # waiting calls: it says none is in flight.
    start(client, access_code="a")

    output = CliRunner().invoke(main, ["status", str(study_folder)]).output

    (calls,) = [line for line in output.splitlines() if "model calls:" in line]
    assert calls.strip() == "model calls: none in flight (4 slots), 0 refused busy in the last minute", calls


def test_a_server_whose_last_writer_stopped_still_shows_what_it_answered(app, study_folder):
    # A pilot's one writer, or the end of a launch: no request comes after the last batch to
    # write the process's counts, and `study status` must not say "no requests recorded".
    app.extensions["study.activity"].seconds = 0.2
    session_id = start(app.test_client(), access_code="last-writer")
    to_writing(app.test_client(), session_id, prompt="pig")
    post_init(app.test_client(), session_id)  # its one event batch, and then nothing more

    deadline = time.monotonic() + 10
    while True:
        output = CliRunner().invoke(main, ["status", str(study_folder)]).output
        if "1 event batches" in output or time.monotonic() > deadline:
            break
        time.sleep(0.1)

    assert "no requests recorded" not in output, output
    assert re.search(r"Last minute, 1 server process: \d+ requests \(1 event batches, 0 asking the model\)", output), output
