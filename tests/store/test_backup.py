"""`study backup`: a researcher copies a running study's database and can restore from the copy.
The copy is taken while a real `study serve` stores a writer's events, holds every event
acknowledged before it began, and is never left half-written under the name restored from."""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from study import config as study_config
from study.cli import main
from study.store import create_tables, make_engine, writing
from study.store import pg_backup
from study.store.db import events, sessions
from tests.conftest import CONTACT
from tests.read_only import read_only
from tests.scale.browser import Browser, start_writing
from tests.scale.servers import ServerProcess, free_port, study_serve

TEXT = "The backup ran while the writer kept on typing, and nothing was lost. "


def backup(*arguments: str, **options) -> subprocess.CompletedProcess:
    """`python -m study backup ...`, in its own process as a researcher runs it."""
    return subprocess.run([sys.executable, "-m", "study", "backup", *arguments],
                          capture_output=True, text=True, timeout=120, **options)  # fmt: skip


def stored(path: Path) -> tuple[str, set[int], int]:
    """(integrity_check, the event seqs, sessions) of a database file, read straight from it."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
        seqs = {seq for (seq,) in connection.execute("SELECT seq FROM events")}
        (count,) = connection.execute("SELECT count(*) FROM sessions").fetchone()
    return integrity, seqs, count


def served_folder(tmp_path: Path, name: str) -> Path:
    from study.cli import write_study_files

    folder = tmp_path / name
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    return folder


def with_events(study_folder: Path, count: int, text_size: int = 0) -> None:
    """study.db with one session and `count` events, stored through the store."""
    engine = make_engine(study_config.load(study_folder).database_url)
    create_tables(engine)
    with writing(engine) as connection:
        connection.execute(sessions.insert().values(session_id="a" * 32, stage="writing", created_at=time.time()))
        connection.execute(events.insert(), [
            {"session_id": "a" * 32, "seq": seq, "event_name": "text-insert", "event_timestamp": seq,
             "record": "x" * text_size, "received_at": time.time()} for seq in range(count)
        ])  # fmt: skip
    engine.dispose()


@pytest.mark.slow
def test_a_backup_taken_while_the_server_stores_events_holds_every_acknowledged_one(study_folder, tmp_path):
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port)],
                           port, tmp_path / "server.log")  # fmt: skip
    server.start()
    stop, failed = threading.Event(), []
    writer = None
    try:
        import httpx

        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "backup-1"))

        def write():
            try:
                characters = iter(TEXT * 1000)
                while not stop.is_set():
                    browser.type("".join(next(characters) for _ in range(3)))
                    assert browser.send(), "the server stopped answering"
            except BaseException as error:  # noqa: BLE001 - reported below
                failed.append(error)

        writer = threading.Thread(target=write)
        writer.start()
        while len(browser.progress()[0]) < 200 and writer.is_alive():
            time.sleep(0.01)
        acked_before, _ = browser.progress()
        out = tmp_path / "copies" / "study-copy.db"
        done = backup(str(study_folder), "--out", str(out))
        time.sleep(0.3)  # the writer goes on after the backup too
    finally:
        stop.set()
        if writer is not None:
            writer.join(timeout=30)
        server.stop()
    assert not failed, failed
    assert done.returncode == 0, done.stderr

    integrity, seqs, session_count = stored(out)
    assert integrity == "ok"
    assert acked_before <= seqs, "an event acknowledged before the backup began is missing from it"
    assert f"to {out}" in done.stdout
    assert f"Sessions: {session_count}, events: {len(seqs)}; integrity_check ok" in done.stdout
    assert len(browser.progress()[0]) > len(seqs), "the writer's events went on being stored after the copy"

    # Restored in place of another study's study.db, it is that study's database.
    restored = served_folder(tmp_path, "restored")
    shutil.copyfile(out, restored / "study.db")
    status = CliRunner().invoke(main, ["status", str(restored)])
    assert status.exit_code == 0, status.output
    assert f"Events stored: {len(seqs)}" in status.output
    exported = CliRunner().invoke(main, ["export", str(restored), "--out", str(tmp_path / "export"), "--all"])
    assert exported.exit_code == 0, exported.output
    assert f"({len(seqs)} events)" in exported.output



@pytest.mark.parametrize("left", ["with its wal", "alone", "wal without shm"])
def test_a_study_on_a_disk_turned_read_only_is_backed_up_whole(study_folder, tmp_path, left):
    # A disk Linux remounted read-only after an error: the moment a backup is wanted most. A
    # server that stopped leaves study.db-wal (commits not yet in study.db) and -shm beside it;
    # the last program to close the database, study.db alone. Either way SQLite could not open
    # it to read: "failed while copying (unable to open database file) ... Fix: free space
    # where it goes", of a backup going to a disk with room.
    server = study_serve(study_folder, tmp_path / "server.log")
    try:
        import httpx

        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "read-only-1"))
        browser.typed(TEXT * 3)
    finally:
        server.kill()
    if left == "alone":
        with closing(sqlite3.connect(study_folder / "study.db")) as last:
            last.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # then closing it removes the -wal
    if left == "wal without shm":  # e.g. copied without it: SQLite would have to make it
        (study_folder / "study.db-shm").unlink()
    wal = study_folder / "study.db-wal"
    assert (wal.exists() and wal.stat().st_size > 0) == (left != "alone")
    out = tmp_path / "copies" / "study.db"

    with read_only(study_folder):
        done = backup(str(study_folder), "--out", str(out))

    if left == "wal without shm":
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert f"{study_folder} cannot be written and study.db-wal beside study.db holds commits" in done.stderr
        assert f"Fix: copy its files as they are (cp -p {study_folder / 'study.db'}*" in done.stderr
        assert not out.exists()
        return
    assert done.returncode == 0, done.stderr
    integrity, seqs, sessions_count = stored(out)
    assert integrity == "ok" and sessions_count == 1
    assert seqs == set(range(browser.seq)) == browser.progress()[0]

def test_the_default_backup_is_named_by_its_time_beside_the_study_and_private(study_folder):
    with_events(study_folder, 30)

    done = backup(str(study_folder))

    assert done.returncode == 0, done.stderr
    (made,) = (study_folder / "backups").iterdir()
    assert made.name.startswith("study-") and made.name.endswith("Z.db")
    stamp = time.strptime(made.name[len("study-"):-len(".db")], "%Y-%m-%dT%H-%M-%SZ")
    assert abs(time.mktime(stamp) - time.mktime(time.gmtime())) < 60  # UTC
    assert stored(made) == ("ok", set(range(30)), 1)
    assert made.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (study_folder / "backups").iterdir()) == [made.name]  # one file, no -wal


def test_an_existing_file_is_not_overwritten_unless_asked(study_folder, tmp_path):
    with_events(study_folder, 10)
    out = tmp_path / "kept.db"
    out.write_text("an earlier backup")

    refused = backup(str(study_folder), "--out", str(out))

    assert refused.returncode == 1
    assert f"{out} already exists" in refused.stderr and "--overwrite" in refused.stderr
    assert out.read_text() == "an earlier backup"

    replaced = backup(str(study_folder), "--out", str(out), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert stored(out) == ("ok", set(range(10)), 1)


def test_a_backup_cut_short_by_a_full_disk_leaves_nothing_under_its_name(study_folder, tmp_path):
    # The study database far larger than what the backup's process may write (a disk that
    # fills up halfway through the copy).
    with_events(study_folder, 2000, text_size=1000)
    out = tmp_path / "copies" / "study.db"
    out.parent.mkdir()
    limit = 256 * 1024

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = backup(str(study_folder), "--out", str(out), preexec_fn=small_disk)

    assert done.returncode == 1, done.stdout
    assert "failed while copying" in done.stderr and "nothing was left under that name" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(out.parent.iterdir()) == [], "a partial backup (or its journal) was left behind"
    assert stored(study_folder / "study.db") == ("ok", set(range(2000)), 1)


def test_a_folder_that_cannot_hold_the_backup_is_named_with_the_fix(study_folder, tmp_path):
    with_events(study_folder, 5)
    (tmp_path / "a-file").write_text("")

    done = backup(str(study_folder), "--out", str(tmp_path / "a-file" / "study.db"))

    assert done.returncode == 1
    assert f"cannot write the backup {tmp_path / 'a-file' / 'study.db'}" in done.stderr
    assert "Fix:" in done.stderr and "Traceback" not in done.stderr


def test_the_database_itself_is_never_the_backup(study_folder):
    with_events(study_folder, 5)

    done = backup(str(study_folder), "--out", str(study_folder / "study.db"), "--overwrite")

    assert done.returncode == 1
    assert "is the study's database itself" in done.stderr
    assert stored(study_folder / "study.db") == ("ok", set(range(5)), 1)


def test_a_study_never_served_has_nothing_to_back_up(study_folder):
    done = backup(str(study_folder))

    assert done.returncode == 1
    assert "has not been served yet" in done.stderr
    assert not (study_folder / "study.db").exists()


# PostgreSQL: the run's throwaway cluster (tests/store/conftest.py), skipped without it.


@pytest.mark.postgres
def test_a_postgresql_backup_restores_with_pg_restore_and_never_shows_the_password(
    study_folder, tmp_path, password_database, postgres_url
):
    import psycopg

    url, password = password_database
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url.render_as_string(hide_password=False)}"', 1))
    with_events(study_folder, 40)
    # pg_dump as found on PATH, with each command line it is given written down.
    seen = tmp_path / "pg_dump-arguments"
    wrapper = tmp_path / "bin" / "pg_dump"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {seen}\nexec {pg_backup.tool("pg_dump")} "$@"\n')
    wrapper.chmod(0o755)
    out = tmp_path / "study.dump"

    done = backup(str(study_folder), "--out", str(out),
                  env={**os.environ, "PATH": f"{wrapper.parent}:{os.environ['PATH']}"})  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "Sessions: 1, events: 40; pg_restore --list read its" in done.stdout
    assert password not in done.stdout + done.stderr
    assert password not in seen.read_text() and "--snapshot=" in seen.read_text()
    assert out.stat().st_mode & 0o777 == 0o600
    restored = f"restored_{uuid.uuid4().hex[:10]}"
    admin = make_url(postgres_url)
    with psycopg.connect(host=admin.host, port=admin.port, user=admin.username, dbname=admin.database,
                         autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{restored}"')
    target = admin.set(drivername="postgresql", database=restored).render_as_string(hide_password=False)
    subprocess.run([pg_backup.tool("pg_restore"), "--no-owner", f"--dbname={target}", str(out)],
                   check=True, capture_output=True)  # fmt: skip
    with psycopg.connect(target) as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == 40
        assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1


@pytest.mark.postgres
def test_a_wrong_password_fails_with_pg_dumps_reason_and_never_shows_it(study_folder, tmp_path, password_database):
    url, password = password_database
    wrong = url.set(password="not-" + password)
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{wrong.render_as_string(hide_password=False)}"', 1))
    out = tmp_path / "study.dump"

    done = backup(str(study_folder), "--out", str(out))

    assert done.returncode == 1
    assert "not-" + password not in done.stdout + done.stderr
    assert "password authentication failed" in done.stderr
    assert not out.exists()


def test_without_pg_dump_the_error_names_the_fix(study_folder, tmp_path, monkeypatch):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', 'database = "postgresql+psycopg://u:s3cret@127.0.0.1:1/x"', 1))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(pg_backup, "DEBIAN_TOOLS", tmp_path / "no-postgresql")

    result = CliRunner().invoke(main, ["backup", str(study_folder)])

    assert result.exit_code == 1
    assert "pg_dump was not found" in result.output and "apt-get install postgresql-client" in result.output
    assert "s3cret" not in result.output
    assert not (study_folder / "backups").exists()


@pytest.mark.postgres
def test_a_postgresql_backup_onto_a_full_disk_names_that_disk_not_the_database(study_folder, tmp_path, postgres_url):
    from tests.store.conftest import empty_database

    empty_database(postgres_url).dispose()
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{postgres_url}"', 1))
    with_events(study_folder, 50)
    # pg_dump on a disk with room for 8 KB (a file size limit it must respect, as a full disk
    # refuses a write: "could not write to output file").
    wrapper = tmp_path / "bin" / "pg_dump"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\ntrap '' XFSZ\nulimit -f 16\nexec {pg_backup.tool('pg_dump')} \"$@\"\n")
    wrapper.chmod(0o755)
    out = tmp_path / "copies" / "study.dump"

    done = backup(str(study_folder), "--out", str(out),
                  env={**os.environ, "PATH": f"{wrapper.parent}:{os.environ['PATH']}"})  # fmt: skip

    assert done.returncode == 1, done.stdout
    assert "could not write to output file" in done.stderr
    assert f"Fix: free space on the disk holding {out.parent}" in done.stderr
    assert "[study] database" not in done.stderr
    assert list(out.parent.iterdir()) == []
