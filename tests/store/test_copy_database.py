"""`study copy-database`: a researcher who piloted on SQLite moves the study, whole, into an
empty PostgreSQL database to serve the main round from several hosts. The copy serves the same
sessions and exports the same files byte for byte, the payment ledger keeps what it paid, new
rows get new ids, and each case it must not copy in is refused with the fix, the target left
as it was and no password printed."""

from __future__ import annotations

import socket
import sqlite3
import sys
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Column, Engine, Integer, String, Table, event, inspect, select
from sqlalchemy.engine import make_url

from study import config as study_config
from study.cli import main
from study.mturk import budget, ledger
from study.review import accounts
from study.server import create_app
from study.server.stages import lost_names
from study.store import activity, create_tables, make_engine, reading, writing
from study.store.db import metadata
from tests.scale.servers import ServerProcess, free_port
from tests.server.flow import finish, start, to_writing
from tests.store.records import Editor

pytestmark = pytest.mark.postgres

SANDBOX = "sandbox:123456789012"


@pytest.fixture
def new_database(postgres_url) -> str:
    """A new, empty PostgreSQL database of the test run's cluster, as `createdb` makes one, named
    as a researcher would give it: postgresql://user@host:port/name."""
    import psycopg

    url = make_url(postgres_url)
    name = f"main_round_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return url.set(drivername="postgresql", database=name).render_as_string(hide_password=False)


@dataclass
class Pilot:
    folder: Path
    writing_id: str  # the session still writing when the servers were stopped
    editor: Editor  # its browser's editor


@pytest.fixture
def pilot(study_folder, monkeypatch) -> Pilot:
    """A study piloted on SQLite: two sessions written to the end and one still writing, served
    through the app; a reviewer account; a HIT's reward slots in the MTurk ledger, one paid."""
    # No activity row during the pilot: the copy refuses a study whose servers answered lately.
    monkeypatch.setenv("STUDY_ACTIVITY_SECONDS", "60")
    app = create_app(study_config.load(study_folder), suggestion_engine=object())
    client = app.test_client()
    for code in ("lab-1", "lab-2"):
        session_id = start(client, access_code=code)
        to_writing(client, session_id)
        finish(client, session_id)
    writing_id = start(client, access_code="lab-3")
    to_writing(client, writing_id)
    editor = Editor("Prompt.\n")
    typed = client.post(f"/api/sessions/{writing_id}/events",
                        json={"events": [editor.initialize(), *editor.type("It began with a knock.")]})  # fmt: skip
    assert typed.status_code == 200, typed.json
    engine = app.extensions["study.engine"]
    with writing(engine) as connection:
        accounts.add(connection, "ada", "a long enough password", role="researcher")
        ledger.plan_rewards(connection, SANDBOX, hit_token="pilot-hit", reward=Decimal("2.50"),
                            max_assignments=3, count=3, hit_id="HIT1")  # fmt: skip
        paid = ledger.entries(connection, SANDBOX)[0]
        ledger.confirm(connection, paid["id"], "approved")
    engine.dispose()
    return Pilot(study_folder, writing_id, editor)


@pytest.fixture
def piloted(pilot) -> Path:
    return pilot.folder


def with_driver(url: str) -> str:
    """The URL as the toolkit opens it (psycopg, the driver it installs)."""
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def copy(folder: Path, to: str):
    return CliRunner().invoke(main, ["copy-database", str(folder), "--to", to])


def printed_database(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.strip().startswith("database = ")]
    return line.split('"')[1]


def point_at(folder: Path, url: str) -> None:
    """What the researcher does with the line the command printed."""
    config = folder / "study.toml"
    text = config.read_text()
    assert 'database = ""\n' in text
    config.write_text(text.replace('database = ""\n', f'database = "{url}"\n', 1))


def table_names(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_a_piloted_study_is_served_and_exported_from_postgresql_as_it_was(pilot, new_database, tmp_path):
    piloted = pilot.folder
    before_status = CliRunner().invoke(main, ["status", str(piloted)])
    assert before_status.exit_code == 0, before_status.output
    pilot_export = tmp_path / "pilot"
    assert CliRunner().invoke(main, ["export", str(piloted), "--out", str(pilot_export), "--all"]).exit_code == 0
    config_before = (piloted / "study.toml").read_bytes()

    done = copy(piloted, new_database)

    assert done.exit_code == 0, done.output
    assert (piloted / "study.toml").read_bytes() == config_before, "study.toml is the researcher's to change"
    for table, rows in (("sessions", 3), ("events", 25), ("mturk_payments", 3), ("reviewers", 1)):
        assert any(line.split() == [table, str(rows)] for line in done.output.splitlines()), (table, done.output)
    database = printed_database(done.output)
    assert database == with_driver(new_database)

    point_at(piloted, database)
    after_status = CliRunner().invoke(main, ["status", str(piloted)])
    assert after_status.exit_code == 0, after_status.output
    assert "postgresql" in after_status.output.splitlines()[0]
    assert after_status.output.splitlines()[1:] == before_status.output.splitlines()[1:]
    copy_export = tmp_path / "copy"
    assert CliRunner().invoke(main, ["export", str(piloted), "--out", str(copy_export), "--all"]).exit_code == 0
    exported = sorted(path.name for path in pilot_export.iterdir())
    assert len([name for name in exported if name.endswith(".jsonl")]) == 3
    assert sorted(path.name for path in copy_export.iterdir()) == exported
    for name in exported:
        assert (copy_export / name).read_bytes() == (pilot_export / name).read_bytes(), name


def test_a_writer_still_writing_goes_on_from_postgresql(pilot, new_database):
    assert copy(pilot.folder, new_database).exit_code == 0
    point_at(pilot.folder, with_driver(new_database))
    study = study_config.load(pilot.folder)
    engine = make_engine(study.database_url)
    try:
        assert lost_names(study, engine) is None, "study serve would refuse to start"
    finally:
        engine.dispose()
    client = create_app(study, suggestion_engine=object()).test_client()

    # The server on PostgreSQL replays the copied events under the next batch, as it does every batch.
    typed = client.post(f"/api/sessions/{pilot.writing_id}/events", json={"events": pilot.editor.type(" Then another.")})

    assert typed.status_code == 200, typed.json
    state = client.get(f"/api/sessions/{pilot.writing_id}/state").get_json()
    assert state["doc"] == pilot.editor.doc


def test_the_ledger_remembers_what_it_paid_and_new_rows_take_new_ids(piloted, new_database):
    assert copy(piloted, new_database).exit_code == 0
    engine = make_engine(with_driver(new_database))
    try:
        with reading(engine) as connection:
            assert budget.totals(connection, SANDBOX).paid.total > 0
            copied_ids = [entry["id"] for entry in ledger.entries(connection, SANDBOX)]
        # The servers' own inserts after the move: a HIT's next slots, a second reviewer.
        with writing(engine) as connection:
            ledger.plan_rewards(connection, SANDBOX, hit_token="main-hit", reward=Decimal("2.50"),
                                max_assignments=2, count=2, hit_id="HIT2")  # fmt: skip
            accounts.add(connection, "grace", "another long password")
        with reading(engine) as connection:
            ids = [entry["id"] for entry in ledger.entries(connection, SANDBOX)]
            reviewer_ids = [account["reviewer_id"] for account in accounts.all_accounts(connection)]
    finally:
        engine.dispose()
    assert ids[:3] == copied_ids and min(ids[3:]) > max(copied_ids) and len(set(ids)) == 5
    assert len(set(reviewer_ids)) == 2


def test_a_table_added_later_is_copied_with_the_rest(piloted, new_database):
    notes = Table("pilot_notes", metadata, Column("id", Integer, primary_key=True), Column("note", String(64)))
    try:
        source = make_engine(study_config.load(piloted).database_url)
        create_tables(source)
        with writing(source) as connection:
            connection.execute(notes.insert(), [{"id": 7, "note": "round one"}, {"id": 9, "note": "round two"}])
        source.dispose()

        done = copy(piloted, new_database)

        assert done.exit_code == 0, done.output
        target = make_engine(printed_database(done.output))
        with reading(target) as connection:
            assert connection.execute(select(notes).order_by(notes.c.id)).all() == [(7, "round one"), (9, "round two")]
        target.dispose()
    finally:
        metadata.remove(notes)


def test_a_database_holding_a_study_is_never_merged_into(piloted, new_database):
    assert copy(piloted, new_database).exit_code == 0

    again = copy(piloted, new_database)

    assert again.exit_code == 1
    assert "already holds a study's rows (" in again.output and "sessions 3" in again.output
    assert "never merges nor overwrites" in again.output and "Fix: copy into a new database" in again.output
    engine = make_engine(with_driver(new_database))
    with reading(engine) as connection:
        assert len(ledger.entries(connection, SANDBOX)) == 3, "nothing was added to the copy"
    engine.dispose()


def test_a_study_already_on_postgresql_is_not_a_source(piloted, new_database, postgres_url):
    point_at(piloted, make_url(postgres_url).set(password="pilot-secret").render_as_string(hide_password=False))

    refused = copy(piloted, new_database)

    assert refused.exit_code == 1
    assert "not a SQLite file" in refused.output and "Fix:" in refused.output
    assert "pilot-secret" not in refused.output
    assert table_names(with_driver(new_database)) == []


def test_a_study_being_served_is_not_copied(piloted, new_database):
    engine = make_engine(study_config.load(piloted).database_url)
    now = time.time()
    with writing(engine) as connection:
        activity.record(connection, activity.Interval("host-a:4242", started_at=now - 10, ended_at=now - 1, requests=5))
    engine.dispose()

    refused = copy(piloted, new_database)

    assert refused.exit_code == 1
    assert "is being served" in refused.output and "host-a:4242" in refused.output
    assert "stop every `study serve`" in refused.output and "Nothing was copied" in refused.output
    assert table_names(with_driver(new_database)) == []


def test_a_server_no_writer_has_reached_yet_is_seen_by_its_open_database(piloted, new_database):
    # Started after the pilot, it answered nothing: no activity row, but its pool holds study.db
    # open, and the first writer to arrive after the copy would be stored in study.db alone.
    idle = create_app(study_config.load(piloted), suggestion_engine=object())

    refused = copy(piloted, new_database)

    assert refused.exit_code == 1
    assert "is open in another program" in refused.output and "Nothing was copied" in refused.output
    assert table_names(with_driver(new_database)) == []
    idle.extensions["study.engine"].dispose()  # the server stopped
    assert copy(piloted, new_database).exit_code == 0


def test_a_study_serve_no_writer_has_reached_yet_is_refused(piloted, new_database, tmp_path):
    # `study serve` itself: its master empties the pool before forking the workers, so a worker
    # that has answered only /healthz (no database) must still hold study.db open, or the copy
    # goes ahead under it and its first writer is stored in study.db alone.
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(piloted), "--port", str(port),
                            "--workers", "1"], port, tmp_path / "serve.log")
    server.start(timeout=60)
    try:
        refused = copy(piloted, new_database)
    finally:
        server.stop()

    assert refused.exit_code == 1, refused.output
    assert "is open in another program" in refused.output and "Nothing was copied" in refused.output
    assert table_names(with_driver(new_database)) == []


@pytest.mark.parametrize("preload", [False, True], ids=["workers-import", "preload"])
@pytest.mark.parametrize("shipped_config", [False, True], ids=["plain", "shipped-config"])
def test_an_idle_gunicorn_is_refused(piloted, new_database, tmp_path, preload, shipped_config):
    # gunicorn's workers open study.db at their first request, and with --preload none builds
    # the app: study.server.wsgi has each one hold it open from its start, whether or not
    # gunicorn is given the shipped config (the README's recipe) or none (every gunicorn
    # tutorial's `gunicorn module:app`). Answering only /healthz (no database), an idle gunicorn
    # must still be seen, or its first writer after the copy is stored in study.db alone.
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-w", "1", "-b", f"127.0.0.1:{port}", "study.server.wsgi:app"]
    if shipped_config:
        command[3:3] = ["-c", "python:study.server.gunicorn_config"]
    server = ServerProcess(command + (["--preload"] if preload else []), port, tmp_path / "gunicorn.log",
                           env={"STUDY_DIR": str(piloted), "STUDY_SECRET_KEY": "test-key"})  # fmt: skip
    server.start(timeout=60)
    try:
        # Idle: past the start's own write (the worker answered /healthz, so it has loaded the
        # app), whose WAL checkpoint connection is let go within a round or two
        # (study.store.checkpoints): only a connection the worker holds can refuse the copy.
        time.sleep(4)
        refused = copy(piloted, new_database)
    finally:
        server.stop()

    assert refused.exit_code == 1, refused.output
    assert "is open in another program" in refused.output and "Nothing was copied" in refused.output
    assert table_names(with_driver(new_database)) == []
    assert copy(piloted, new_database).exit_code == 0  # gunicorn stopped: nothing else held it


def test_a_server_that_cannot_be_reached_is_named_without_its_password(piloted):
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    refused = copy(piloted, f"postgresql://study:Tr0ub4dor-secret@127.0.0.1:{closed_port}/main")

    assert refused.exit_code == 1
    assert f"cannot reach PostgreSQL at 127.0.0.1:{closed_port} (database 'main', user 'study')" in refused.output
    assert "Fix:" in refused.output and "Traceback" not in refused.output
    assert "Tr0ub4dor-secret" not in refused.output


def _unreachable() -> str:
    """A PostgreSQL address nothing answers at: a port just closed."""
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return f"postgresql://study@127.0.0.1:{probe.getsockname()[1]}/main"


def test_a_study_being_served_is_refused_before_postgresql_is_asked(piloted):
    # The researcher forgot a server: that is what they must hear, not that PostgreSQL is
    # unreachable, which they would fix only to be refused again.
    engine = make_engine(study_config.load(piloted).database_url)
    now = time.time()
    with writing(engine) as connection:
        activity.record(connection, activity.Interval("host-a:4242", started_at=now - 10, ended_at=now - 1, requests=5))
    engine.dispose()

    refused = copy(piloted, _unreachable())

    assert refused.exit_code == 1
    assert "is being served" in refused.output and "host-a:4242" in refused.output
    assert "cannot reach PostgreSQL" not in refused.output


def test_a_study_db_open_in_another_program_is_refused_before_postgresql_is_asked(piloted):
    idle = create_app(study_config.load(piloted), suggestion_engine=object())
    try:
        refused = copy(piloted, _unreachable())
    finally:
        idle.extensions["study.engine"].dispose()

    assert refused.exit_code == 1
    assert "is open in another program" in refused.output
    assert "cannot reach PostgreSQL" not in refused.output
    # With study.db free, the copy could go ahead: now the unreachable PostgreSQL is the news.
    assert "cannot reach PostgreSQL" in copy(piloted, _unreachable()).output


def test_a_database_that_does_not_exist_is_named_without_its_password(piloted, postgres_url):
    missing = make_url(postgres_url).set(drivername="postgresql", database="no_such_db", password="Tr0ub4dor-secret")

    refused = copy(piloted, missing.render_as_string(hide_password=False))

    assert refused.exit_code == 1
    assert "cannot reach PostgreSQL" in refused.output and "no_such_db" in refused.output
    assert "Tr0ub4dor-secret" not in refused.output


def test_the_password_is_never_printed_and_study_toml_gets_a_placeholder(piloted, new_database):
    # The test cluster trusts every local connection, so any password is accepted.
    with_password = make_url(new_database).set(password="Tr0ub4dor-secret").render_as_string(hide_password=False)

    done = copy(piloted, with_password)

    assert done.exit_code == 0, done.output
    assert "Tr0ub4dor-secret" not in done.output
    assert printed_database(done.output) == (make_url(new_database).set(drivername="postgresql+psycopg", password="PASSWORD")
                                             .render_as_string(hide_password=False))  # fmt: skip
    assert "PGPASSWORD" in done.output


def test_a_copy_that_fails_halfway_leaves_the_target_as_it_was(piloted, new_database):
    # SQLite keeps any length in a VARCHAR(64); PostgreSQL refuses it, well after the first tables.
    with closing(sqlite3.connect(piloted / "study.db")) as connection, connection:
        connection.execute("INSERT INTO start_throttle (key, at) VALUES (?, ?)", ("k" * 100, time.time()))

    refused = copy(piloted, new_database)

    assert refused.exit_code == 1
    assert "copying table start_throttle" in refused.output and "rolled back" in refused.output
    assert table_names(with_driver(new_database)) == [], "not even an empty table"


def test_a_copy_during_which_study_db_changed_is_rolled_back(piloted, new_database):
    """A server no activity row shows (idle until then) stores a batch while the rows are copied."""
    database = piloted / "study.db"

    def server_writes(_connection, _cursor, statement, _parameters, _context, _many):
        if statement.startswith("INSERT INTO events"):
            with closing(sqlite3.connect(database)) as writer, writer:
                writer.execute("UPDATE sessions SET missing_events = missing_events + 1")

    event.listen(Engine, "before_cursor_execute", server_writes)
    try:
        refused = copy(piloted, new_database)
    finally:
        event.remove(Engine, "before_cursor_execute", server_writes)

    assert refused.exit_code == 1
    assert "changed while it was copied" in refused.output and "Nothing was copied" in refused.output
    assert table_names(with_driver(new_database)) == []

