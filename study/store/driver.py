"""The event API's hot path on the driver's own connection: its few statements per batch run
there rather than through SQLAlchemy's statement machinery (docs/benchmarks.md), inside a
transaction of study.store.transactions or (a read) outside any.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine


def driver_fetch(connection: Connection, sql: str, parameters: tuple | list) -> list[tuple]:
    """Run one statement on `connection`'s own driver connection, inside its transaction.

    For the event API's few statements per batch only: SQLAlchemy's statement machinery costs
    about 80 us of CPU per statement against the driver's 10, and at 1,000 writers posting a
    batch a second that difference is most of a core (docs/benchmarks.md). `sql` uses `?`.
    On PostgreSQL a prepared statement (study.store.pg_rounds), led by the transaction's BEGIN
    when it is the first statement: one round trip where psycopg takes two."""
    driver = connection.connection.driver_connection
    if connection.dialect.name == "postgresql":
        from study.store import pg_rounds  # PostgreSQL's driver is an optional dependency

        (rows,) = pg_rounds.send(driver, [(sql, parameters)], begin=pg_rounds.idle(driver))
        return rows
    cursor = driver.cursor()
    try:
        cursor.execute(sql, parameters)
        return cursor.fetchall() if cursor.description else []
    finally:
        cursor.close()


def driver_read(engine: Engine, sql: str, parameters: tuple | list) -> list[tuple]:
    """One read outside any transaction of ours, on a pooled driver connection (see
    driver_fetch): on PostgreSQL one round trip, with no BEGIN before it and no ROLLBACK when
    the connection goes back to the pool. (SQLite's driver connections are in autocommit
    already: isolation_level None.)"""
    raw = engine.raw_connection()
    try:
        if engine.dialect.name == "postgresql":
            from study.store import pg_rounds

            (rows,) = pg_rounds.send(raw.driver_connection, [(sql, parameters)])
            return rows
        cursor = raw.cursor()
        try:
            cursor.execute(sql, parameters)
            return cursor.fetchall()
        finally:
            cursor.close()
    finally:
        if getattr(raw.driver_connection, "closed", False):  # cut off mid-round (pg_rounds)
            raw.invalidate()  # not back to the pool
        raw.close()
