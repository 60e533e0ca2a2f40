"""A study begun on SQLite moves to PostgreSQL (README, "Scale"): the researcher sets [study]
database while writers are still in sessions that the folder's study.db holds. Served from the
new, empty database, those writers would lose their place (their pages and event batches no
longer found), so neither `study serve` nor the WSGI module starts, and both say why and what
to do."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from study import config
from study.cli import main
from study.server import create_app, serving
from tests.server.flow import finish, post_init, start, to_writing

from .conftest import new_postgres_database  # noqa: F401 - the fixture
from .servers import free_port

pytestmark = pytest.mark.postgres


def _writers_on_sqlite(study_folder) -> None:
    app = create_app(config.load(study_folder), suggestion_engine=object())
    client = app.test_client()
    done = start(client, access_code="done")
    to_writing(client, done)
    finish(client, done)
    for code in ("still-a", "still-b"):
        writing_now = start(client, access_code=code)
        to_writing(client, writing_now)
        post_init(client, writing_now)
    app.extensions["study.engine"].dispose()  # the pilot's server stopped


def _move_to(study_folder, url: str) -> None:
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))


def test_serve_refuses_a_new_database_while_writers_are_in_sessions_study_db_holds(
    study_folder, new_postgres_database, monkeypatch  # noqa: F811
):
    _writers_on_sqlite(study_folder)
    _move_to(study_folder, new_postgres_database)
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))

    result = CliRunner().invoke(main, ["serve", str(study_folder), "--port", str(free_port())])

    assert result.exit_code == 1 and served == [], result.output
    assert str(study_folder / "study.db") in result.output
    assert "2 session(s) not yet complete" in result.output and "Fix:" in result.output


def test_the_wsgi_module_refuses_it_too(study_folder, new_postgres_database):  # noqa: F811
    _writers_on_sqlite(study_folder)
    _move_to(study_folder, new_postgres_database)

    result = subprocess.run([sys.executable, "-c", "import study.server.wsgi"], capture_output=True, text=True,
                            env={**os.environ, "STUDY_DIR": str(study_folder)}, timeout=60)  # fmt: skip

    assert result.returncode != 0
    assert str(study_folder / "study.db") in result.stderr and "2 session(s) not yet complete" in result.stderr


def test_serve_starts_once_the_writers_of_study_db_are_done(study_folder, new_postgres_database, monkeypatch):  # noqa: F811
    client = create_app(config.load(study_folder), suggestion_engine=object()).test_client()
    done = start(client, access_code="done")
    to_writing(client, done)
    finish(client, done)
    _move_to(study_folder, new_postgres_database)
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))

    result = CliRunner().invoke(main, ["serve", str(study_folder), "--port", str(free_port())])

    assert result.exit_code == 0 and len(served) == 1, result.output


def test_the_refusals_lead_an_operator_who_set_the_url_first_to_the_copy(study_folder, new_postgres_database, monkeypatch):  # noqa: F811
    # The README's first step sets [study] database; the writers of study.db are then moved
    # with `study copy-database`, which copies the database study.toml names.
    monkeypatch.setenv("STUDY_ACTIVITY_SECONDS", "60")  # the pilot's server answered long ago
    _writers_on_sqlite(study_folder)
    _move_to(study_folder, new_postgres_database)
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    target = make_url(new_postgres_database).set(drivername="postgresql").render_as_string(hide_password=False)

    refused = CliRunner().invoke(main, ["serve", str(study_folder), "--port", str(free_port())])
    assert refused.exit_code == 1, refused.output
    assert f"run `study copy-database {study_folder} --to {target}` into an empty database" in refused.output

    copy_refused = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", target])
    assert copy_refused.exit_code == 1, copy_refused.output
    assert "Nothing was copied" in copy_refused.output
    assert f'Fix: to copy {study_folder / "study.db"}, set [study] database = "" again' in copy_refused.output

    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(f'database = "{new_postgres_database}"', 'database = ""', 1))
    copied = CliRunner().invoke(main, ["copy-database", str(study_folder), "--to", target])
    assert copied.exit_code == 0, copied.output
    _move_to(study_folder, new_postgres_database)
    started = CliRunner().invoke(main, ["serve", str(study_folder), "--port", str(free_port())])
    assert started.exit_code == 0 and len(served) == 1, started.output
