"""The shipped gunicorn config (README, "Scale: PostgreSQL and gunicorn"): what gunicorn's
master, which alone knows `-w`, tells or keeps for the operator. It warns once, as `study serve`
does, when PostgreSQL lets in fewer connections than the workers' pools may open; and two
gunicorns of the recipe on one machine each keep a control socket of their own."""

from __future__ import annotations

import os
import re
import socket
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gunicorn.config import KNOWN_SETTINGS
import pytest

from .conftest import new_postgres_database  # noqa: F401 - the fixture
from .servers import ServerProcess, free_port

pytestmark = pytest.mark.slow

SHORT = "Warning: PostgreSQL at"


def gunicorn(study_folder: Path, log: Path, *options: str, env: dict | None = None) -> ServerProcess:
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "python:study.server.gunicorn_config",
               "-b", f"127.0.0.1:{port}", *options, "study.server.wsgi:app"]
    return ServerProcess(command, port, log,
                         env={"STUDY_DIR": str(study_folder), "STUDY_SECRET_KEY": "test-key", **(env or {})})


def log_on_postgresql(study_folder: Path, url: str, log: Path, *options: str) -> str:
    """What gunicorn logged, started on the study moved to PostgreSQL at `url`, and stopped."""
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))
    server = gunicorn(study_folder, log, *options, env={"STUDY_THREADS": "100"})
    server.start(timeout=60)
    server.stop()
    return server.log_text()


@pytest.mark.postgres
def test_more_connections_than_postgresql_lets_in_are_named_once_by_the_master(
    study_folder, new_postgres_database, tmp_path  # noqa: F811
):
    # The test cluster lets 197 in (max_connections 200, 3 for superusers); two workers of 100
    # threads (STUDY_THREADS 100 as well) and 6 to spare may open 212.
    log = log_on_postgresql(study_folder, new_postgres_database, tmp_path / "gunicorn.log",
                            "-w", "2", "--threads", "100")

    assert log.count(SHORT) == 1, log
    assert "lets 197 connections in (max_connections 200, 3 kept for superusers)" in log
    assert "2 worker processes may open 212 (106 each: 100 threads" in log
    assert "Fix: raise it (ALTER SYSTEM SET max_connections = 225, then restart PostgreSQL)" in log


@pytest.mark.postgres
def test_gunicorns_threads_within_max_connections_are_not_warned(
    study_folder, new_postgres_database, tmp_path  # noqa: F811
):
    # STUDY_THREADS sizes each pool for 100 threads, but a worker of 4 threads holds no more than
    # 4 connections and its spares: two of them fit.
    log = log_on_postgresql(study_folder, new_postgres_database, tmp_path / "gunicorn.log",
                            "-w", "2", "--threads", "4")

    assert SHORT not in log and "Booting worker" in log


def control_socket(server: ServerProcess) -> str:
    """Where the server's master says its control socket listens (its thread starts once the
    first workers are forked, and may say so after they answer)."""
    deadline = time.monotonic() + 10
    while not (found := re.findall(r"Control socket listening at (\S+)", server.log_text())):
        assert time.monotonic() < deadline, server.log_text()
        time.sleep(0.05)
    return found[-1]


def answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX) as client:
        try:
            client.connect(path)
        except OSError:
            return False
    return True


@pytest.mark.skipif("control_socket" not in {setting.name for setting in KNOWN_SETTINGS},
                    reason="gunicorn before 25.1 opens no control socket")
def test_two_gunicorns_on_one_host_each_keep_their_own_control_socket(study_folder, tmp_path):
    # As two hosts of the recipe run on one machine (tests/scale/test_several_hosts.py), or two
    # studies: the second one to stop must still be reachable by `gunicornc`.
    # A short home: a Unix socket's path holds at most 107 bytes, and pytest's folders
    # (popen-gw0/test_...) would leave no room for gunicorn's own default path either.
    home = Path(tempfile.mkdtemp(prefix="home-", dir="/tmp"))
    env = {"HOME": str(home), "XDG_RUNTIME_DIR": ""}
    first = gunicorn(study_folder, tmp_path / "first.log", "-w", "1", env=env)
    second = gunicorn(study_folder, tmp_path / "second.log", "-w", "1", env=env)
    first.start(timeout=60)
    try:
        second.start(timeout=60)
        path, other = control_socket(first), control_socket(second)
        second.stop()

        assert path != other
        assert path.startswith(str(home / ".gunicorn" / "gunicorn-127.0.0.1-"))
        assert os.path.exists(path) and answers(path)
    finally:
        first.stop()
        second.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.postgres
def test_a_worker_boots_though_the_database_fails_it_as_it_settles_a_killed_workers_calls(
    study_folder, new_postgres_database, tmp_path  # noqa: F811
):
    """gunicorn halts its master, and so the whole host, when a worker fails to boot: a worker
    booting (without --preload, each builds the app) while PostgreSQL restarts must not fail on
    the settling of a killed worker's model calls, which the next request retries. Here the
    database takes no writes, so the settling's UPDATE fails at every boot, deterministically."""
    import time as clock

    from sqlalchemy import insert
    from sqlalchemy.engine import make_url

    from study.server.model_calls import NO_OUTCOME
    from study.server.serving_process import this_host
    from study.store import create_tables, make_engine
    from study.store.db import suggestion_requests

    engine = make_engine(new_postgres_database)
    create_tables(engine)
    with engine.begin() as connection:  # a call of this host's process that no longer runs
        connection.execute(insert(suggestion_requests).values(
            session_id="a" * 32, created_at=clock.time(), condition="c", model="m", parameters="{}",
            raw="[]", suggestions="[]", error=NO_OUTCOME, server_host=this_host(), server_process=f"{os.getpid()}:1",
        ))  # fmt: skip
    engine.dispose()
    read_only = make_url(new_postgres_database).update_query_dict({"options": "-c default_transaction_read_only=on"})
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{read_only.render_as_string(hide_password=False)}"', 1))
    server = gunicorn(study_folder, tmp_path / "gunicorn.log", "-w", "1")

    try:
        server.start(timeout=60)
    finally:
        server.stop()

    assert "model calls of stopped server processes could not be settled" in server.log_text()
    assert "Worker failed to boot" not in server.log_text()
