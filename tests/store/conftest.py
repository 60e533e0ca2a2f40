"""Fixtures: the study database on a real SQLite file or on a real PostgreSQL server (a throwaway
cluster started from the initdb/pg_ctl on PATH, skipped without them). The study folder itself
is tests/conftest.py's `study`."""

from __future__ import annotations

import dataclasses
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from study import config as study_config
from study.store import create_tables, make_engine
from study.store.db import metadata

POSTGRES_TOOLS = ("initdb", "pg_ctl")


def _postgres_tool(name: str) -> str | None:
    """On PATH, or where Debian's postgresql package puts the server binaries."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None
POSTGRES_SUPERUSER = "study_test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _cluster_owner() -> str | None:
    """PostgreSQL refuses to run as root; as root, run it as `postgres` (else `nobody`)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    pytest.skip("running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL")


def _run(command: list[str], owner: str | None, check=True, **kwargs) -> subprocess.CompletedProcess:
    if owner is not None:
        command = ["runuser", "-u", owner, "--", *command]
    return subprocess.run(command, check=check, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="session")
def postgres_url():
    """A `postgresql+psycopg://` URL of an empty database on a throwaway cluster, which lives in
    a temporary folder for the whole test run."""
    tools = {tool: _postgres_tool(tool) for tool in POSTGRES_TOOLS}
    missing = [tool for tool, path in tools.items() if path is None]
    if missing:
        pytest.skip(f"PostgreSQL tests need {' and '.join(missing)} (install Debian's postgresql)")
    owner = _cluster_owner()
    # Not under pytest's tmp_path: its parents are private to root, and the server runs as `owner`.
    base = Path(tempfile.mkdtemp(prefix="study-pg-"))
    data, sockets = base / "data", base / "sockets"
    sockets.mkdir()
    if owner is not None:
        entry = pwd.getpwnam(owner)
        for path in (base, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    # Durability is pointless for a throwaway cluster; without fsync the tests run faster.
    options = (f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    try:
        _run([tools["initdb"], "-D", str(data), "-U", POSTGRES_SUPERUSER, "--auth=trust",
              "--encoding=UTF8", "--no-locale", "--no-sync"], owner, env=env)
        _run([tools["pg_ctl"], "-D", str(data), "-l", str(base / "server.log"), "-w", "-t", "60",
              "-o", options, "start"], owner, env=env, cwd=base)
    except subprocess.CalledProcessError as error:
        log = (base / "server.log").read_text() if (base / "server.log").exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {error.stderr or error.stdout}\n{log}")
    try:
        yield _create_database("127.0.0.1", port, "study")
    finally:
        _run([tools["pg_ctl"], "-D", str(data), "-m", "immediate", "-w", "stop"], owner, check=False, cwd=base)
        shutil.rmtree(base, ignore_errors=True)


def _create_database(host: str, port: int, name: str) -> str:
    import psycopg

    with psycopg.connect(host=host, port=port, user=POSTGRES_SUPERUSER, dbname="postgres",
                         autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://{POSTGRES_SUPERUSER}@{host}:{port}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, study) -> str:
    """The study database: study.db in the study folder, or the run's PostgreSQL database."""
    if request.param == "sqlite":
        return study.database_url
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def engine(database_url) -> Engine:
    """An engine on an empty study database (PostgreSQL's tables are emptied for each test)."""
    engine = empty_database(database_url)
    yield engine
    engine.dispose()


def empty_database(url: str) -> Engine:
    """An engine on the study database at `url`, its tables made and, on PostgreSQL (one
    cluster serves a whole test run), emptied of what earlier tests stored."""
    engine = make_engine(url)
    create_tables(engine)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            names = ", ".join(f'"{table.name}"' for table in metadata.sorted_tables)
            connection.exec_driver_sql(f"TRUNCATE {names} RESTART IDENTITY")
    return engine


@pytest.fixture
def backend_study(study, database_url, engine) -> study_config.Study:
    """The study, pointed at this test's (emptied) database."""
    return dataclasses.replace(study, database_url=database_url)


@pytest.fixture
def password_database(postgres_url):
    """A database owned by a role that must give its password (scram-sha-256 for it alone on
    the run's cluster, which otherwise trusts every local connection), and that URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    name, role = f"backup_{uuid.uuid4().hex[:10]}", f"writer_{uuid.uuid4().hex[:10]}"
    password = f"pw-{uuid.uuid4().hex}"
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database,
                         autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        admin.execute(f'CREATE DATABASE "{name}" OWNER {role}')
        hba = Path(admin.execute("SHOW hba_file").fetchone()[0])
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        admin.execute("SELECT pg_reload_conf()")
    url = url.set(username=role, password=password, database=name)
    bare = f"postgresql://{role}@{url.host}:{url.port}/{name}"
    deadline = time.monotonic() + 10
    while True:  # until the postmaster has read pg_hba.conf again, and asks for the password
        try:
            psycopg.connect(bare).close()
        except psycopg.OperationalError as error:
            assert "password" in str(error), error
            return url, password
        assert time.monotonic() < deadline, "the cluster never asked for the password"
        time.sleep(0.05)
