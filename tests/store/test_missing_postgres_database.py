"""A study pointed at a PostgreSQL database nobody created yet (README, "Scale: PostgreSQL and
gunicorn": the tables are made on first start, the database is not). The operator is told the
`createdb` command that makes it, by the commands, by gunicorn's `study.server.wsgi`, and by
`study copy-database`, rather than to start a server that is already running. Likewise a
password PostgreSQL refuses, or none given, is answered with where the password goes, and a
PostgreSQL that does not answer with its address, never with SQLite's "a damaged study.db"."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import URL, make_url

from study.cli import main

pytestmark = pytest.mark.postgres


@pytest.fixture
def missing(postgres_url) -> str:
    """The run's cluster, a database on it that does not exist, and a password to keep hidden
    (the test cluster trusts every local connection)."""
    return make_url(postgres_url).set(database="no_such_db", password="Tr0ub4dor-secret").render_as_string(
        hide_password=False
    )


def createdb(url: str) -> str:
    parsed = make_url(url)
    return f"createdb -h {parsed.host} -p {parsed.port} -U {parsed.username} no_such_db"


def served_from(study_folder, url: str) -> None:
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))


def test_a_command_on_a_database_not_created_names_the_createdb_that_makes_it(study_folder, missing):
    served_from(study_folder, missing)

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 1, result.output
    assert 'database "no_such_db" does not exist' in result.output
    assert f"Fix: create it ({createdb(missing)})" in result.output
    assert "start its server" not in result.output  # the server is running: it answered
    assert "Tr0ub4dor-secret" not in result.output


def test_gunicorn_on_a_database_not_created_says_so_without_a_driver_traceback(study_folder, missing):
    served_from(study_folder, missing)

    started = subprocess.run(
        [sys.executable, "-c", "import study.server.wsgi"],
        env={**os.environ, "STUDY_DIR": str(study_folder)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert started.returncode != 0
    last = started.stderr.strip().splitlines()[-1]
    assert last.startswith(f"study.server.wsgi_environment.WSGIConfigError: STUDY_DIR={study_folder}: cannot open"), last
    assert f"Fix: create it ({createdb(missing)})" in last
    assert "Tr0ub4dor-secret" not in started.stderr


def test_copy_database_into_a_database_not_created_names_the_createdb_that_makes_it(study_folder, missing):
    (study_folder / "study.db").touch()  # a pilot: its database is SQLite's study.db
    to = make_url(missing).set(drivername="postgresql").render_as_string(hide_password=False)

    refused = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", to])

    assert refused.exit_code == 1, refused.output
    assert "Nothing was copied" in refused.output
    assert f"Fix: create it ({createdb(missing)}), or name an existing one in --to." in refused.output
    assert "Tr0ub4dor-secret" not in refused.output


def test_a_password_refused_or_missing_names_pgpassword_not_the_server(study_folder, password_database):
    url, password = password_database
    # The URL without the password (URL.set would keep it), as README's hosts are given it.
    bare = URL.create(url.drivername, url.username, None, url.host, url.port, url.database)
    served_from(study_folder, bare.render_as_string(hide_password=False))

    missing = CliRunner().invoke(main, ["status", str(study_folder)], env={"PGPASSWORD": None})
    wrong = CliRunner().invoke(main, ["status", str(study_folder)], env={"PGPASSWORD": "not-" + password})

    for result in (missing, wrong):
        assert result.exit_code == 1, result.output
        assert f"Fix: give {url.username}'s password as PGPASSWORD (or in ~/.pgpass" in result.output
        assert "start its server" not in result.output and "study.db" not in result.output
        assert "not-" + password not in result.output
    assert "no password supplied" in missing.output
    assert "password authentication failed" in wrong.output


def test_a_postgresql_that_does_not_answer_is_named_by_its_address(study_folder, missing):
    served_from(study_folder, make_url(missing).set(host="127.0.0.1", port=1).render_as_string(hide_password=False))

    result = CliRunner().invoke(main, ["status", str(study_folder)])

    assert result.exit_code == 1, result.output
    assert "Fix: start PostgreSQL at 127.0.0.1:1" in result.output and "pg_isready -h 127.0.0.1 -p 1" in result.output
    assert "study.db" not in result.output
    assert "Tr0ub4dor-secret" not in result.output
