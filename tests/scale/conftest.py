"""Fixtures: a `study serve` process on the study folder's SQLite database, and a new database
of its own on the run's throwaway PostgreSQL cluster (tests/store/conftest.py starts it)."""

from __future__ import annotations

import sys
import uuid

import pytest
from sqlalchemy.engine import make_url

from tests.store.conftest import postgres_url  # noqa: F401 - the cluster, shared as a fixture

from .servers import ServerProcess, free_port


@pytest.fixture
def study_server(study_folder, tmp_path):
    """`python -m study serve DIR --port P`; stopped at the end."""
    port = free_port()
    server = ServerProcess(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port)],
        port, tmp_path / "server.log",
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def new_postgres_database(postgres_url) -> str:  # noqa: F811 - the imported fixture
    """The URL of an empty database, created for this test (no tables: the servers make them)."""
    import psycopg

    url = make_url(postgres_url)
    name = f"scale_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres",
                         autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)
