"""The shipped gunicorn config (README, "Scale: PostgreSQL and gunicorn"): what gunicorn's
master, which alone knows `-w`, tells or keeps for the operator. It warns once, as `study serve`
does, when PostgreSQL lets in fewer connections than the workers' pools may open."""

from __future__ import annotations

import sys
from pathlib import Path

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


def on_postgresql(study_folder: Path, url: str) -> None:
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))


@pytest.mark.postgres
def test_more_connections_than_postgresql_lets_in_are_named_once_by_the_master(
    study_folder, new_postgres_database, tmp_path  # noqa: F811
):
    # The test cluster lets 197 in (max_connections 200, 3 for superusers); two workers of 100
    # threads and 6 to spare may open 212.
    on_postgresql(study_folder, new_postgres_database)
    server = gunicorn(study_folder, tmp_path / "gunicorn.log", "-w", "2", "--threads", "100",
                      env={"STUDY_THREADS": "100"})
    server.start(timeout=60)
    server.stop()

    log = server.log_text()
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
    on_postgresql(study_folder, new_postgres_database)
    server = gunicorn(study_folder, tmp_path / "gunicorn.log", "-w", "2", "--threads", "4",
                      env={"STUDY_THREADS": "100"})
    server.start(timeout=60)
    server.stop()

    assert SHORT not in server.log_text() and "Booting worker" in server.log_text()
