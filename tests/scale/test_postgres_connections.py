"""`study serve` on PostgreSQL warns at start when the server lets in fewer connections than its
workers' pools may open (README, "A connection kept for every request thread"): past
max_connections PostgreSQL refuses a new connection, and the writer's request that wanted it
fails mid-launch."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.cli import main
from study.server import serving

from .conftest import new_postgres_database  # noqa: F401 - the fixture
from .servers import free_port

pytestmark = pytest.mark.postgres


@pytest.fixture
def on_postgresql(study_folder, new_postgres_database, monkeypatch):  # noqa: F811
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{new_postgres_database}"', 1))
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(options))
    return served


def serve(study_folder, *options: str):
    return CliRunner().invoke(main, ["serve", str(study_folder), "--port", str(free_port()), *options])


def test_more_connections_than_postgresql_lets_in_are_named_with_the_fix(study_folder, on_postgresql):
    # The test cluster runs with max_connections = 200 (tests/store/conftest.py), 3 of them
    # kept for superusers; two workers of 100 threads, 4 for model calls and 6 to spare: 220.
    result = serve(study_folder, "--workers", "2", "--threads", "100")

    assert result.exit_code == 0 and len(on_postgresql) == 1, result.output
    assert "lets 197 connections in (max_connections 200, 3 kept for superusers)" in result.output
    assert "2 worker processes may open 220 (110 each" in result.output
    assert "Fix: raise it (ALTER SYSTEM SET max_connections = 233, then restart PostgreSQL)" in result.output


def test_a_server_within_max_connections_is_not_warned(study_folder, on_postgresql):
    result = serve(study_folder, "--workers", "1")

    assert result.exit_code == 0 and len(on_postgresql) == 1, result.output
    assert "max_connections" not in result.output
