"""A pooled PostgreSQL connection that the server dropped while it sat idle (a database restart,
a proxy's idle timeout) is replaced before it is handed out: the next request is served, not
answered 500 (study.store.engine pings a connection that has sat idle, not one in steady use)."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy.engine import make_url

from study.store import engine as engine_module
from study.store import make_engine, reading
from study.store.driver import driver_read

pytestmark = pytest.mark.postgres


def drop_every_other_connection(url: str) -> int:
    """What a restart does to the server's side of the pool: every other backend is gone."""
    address = make_url(url)
    with psycopg.connect(host=address.host, port=address.port, user=address.username,
                         dbname=address.database, autocommit=True) as admin:  # fmt: skip
        return len(admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall())  # fmt: skip


def test_a_connection_dropped_while_idle_is_replaced_before_it_is_used(postgres_url, monkeypatch):
    engine = make_engine(postgres_url)
    try:
        assert driver_read(engine, "SELECT 1", ()) == [(1,)]  # a pooled connection now
        assert drop_every_other_connection(postgres_url) >= 1
        monkeypatch.setattr(engine_module, "IDLE_PING_SECONDS", 0.0)  # it has sat idle long enough
        assert driver_read(engine, "SELECT 2", ()) == [(2,)]
        with reading(engine) as connection:
            assert connection.exec_driver_sql("SELECT 3").scalar_one() == 3
    finally:
        engine.dispose()


def test_a_connection_in_steady_use_is_not_pinged(postgres_url):
    """The ping is for idle connections only: one in use a moment ago goes out as it is, and a
    drop in between fails that one statement (the editor resends its batch)."""
    engine = make_engine(postgres_url)
    try:
        assert driver_read(engine, "SELECT 1", ()) == [(1,)]
        drop_every_other_connection(postgres_url)
        with pytest.raises(Exception, match="terminat|closed|connection"):
            driver_read(engine, "SELECT 2", ())
        assert driver_read(engine, "SELECT 3", ()) == [(3,)]  # the pool has replaced it
    finally:
        engine.dispose()
