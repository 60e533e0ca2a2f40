"""`study copy-database` refused because a program holds study.db open names that program: on
Linux its process id and command line, found through /proc (study.store.holders), so the
researcher stops the right one rather than hunting for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from study import config as study_config
from study.cli import main
from study.store import create_tables, make_engine
from tests.scale.servers import ServerProcess, free_port

# A program that opens study.db, reads it (as a sqlite3 shell or an idle server does) and keeps
# it open until its stdin closes.
HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1])
connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
print("holding", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def study_db(study_folder) -> Path:
    engine = make_engine(study_config.load(study_folder).database_url)
    create_tables(engine)
    engine.dispose()
    return study_folder / "study.db"


def unreachable() -> str:
    """A PostgreSQL address nothing answers at (the refusal comes before it is asked)."""
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return f"postgresql://study@127.0.0.1:{probe.getsockname()[1]}/main"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_the_process_holding_study_db_open_is_named_with_its_command_line(study_folder, study_db, tmp_path):
    shell = tmp_path / "pilot_shell.py"
    shell.write_text(HOLDER)
    # Its arguments relative to its folder: the refusal cuts a command line at 200 characters,
    # and pytest's folders (popen-gw1/test_...) can make absolute ones longer.
    database = os.path.relpath(study_db, tmp_path)
    holder = subprocess.Popen([sys.executable, shell.name, database], cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"
        refused = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", unreachable()])
    finally:
        holder.communicate(timeout=10)

    assert refused.exit_code == 1
    assert f"is open in another program: process {holder.pid} ({sys.executable} {shell.name} {database})." in refused.output
    assert "Nothing was copied" in refused.output and "Fix: stop it, then run this again" in refused.output
    assert "cannot reach PostgreSQL" not in refused.output


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_an_idle_gunicorn_is_named_by_its_master_the_process_to_stop(study_folder, study_db, tmp_path):
    # Its workers hold study.db from their start (study.server.wsgi); the master may not, but
    # stopping it is what stops them.
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "python:study.server.gunicorn_config", "-w", "2",
               "-b", f"127.0.0.1:{port}", "study.server.wsgi:app"]
    server = ServerProcess(command, port, tmp_path / "gunicorn.log",
                           env={"STUDY_DIR": str(study_folder), "STUDY_SECRET_KEY": "test-key"})
    server.start(timeout=60)
    try:
        refused = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", unreachable()])
    finally:
        server.stop()

    assert refused.exit_code == 1
    assert f"is open in another program: process {server.process.pid} ({' '.join(command)}), whose processes " in refused.output
    assert "Fix: stop it, then run this again" in refused.output


def test_a_study_db_nobody_holds_goes_on_to_postgresql(study_folder, study_db):
    refused = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", unreachable()])

    assert "is open in another program" not in refused.output
    assert "cannot reach PostgreSQL" in refused.output
