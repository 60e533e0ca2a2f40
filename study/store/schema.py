"""Creating the study database's tables, and upgrading a database an earlier version made: the
tables, columns and indexes it lacks are added (and data it kept elsewhere moved,
study.store.earlier_versions). Every server and command calls create_tables at start.

The tables are every one declared on study.store.db's metadata; study.store imports each module
that declares some, so all are there whichever module a command imported first.
"""

from __future__ import annotations

from sqlalchemy import Column, Connection, Engine, Table, inspect, literal, text
from sqlalchemy.schema import CreateColumn

from study.store.db import metadata
from study.store.earlier_versions import move_survey_answers

# PostgreSQL: the advisory lock servers take in turn to create the tables (create_tables).
_SCHEMA_LOCK = 0x5714D7_5C4E


def create_tables(engine: Engine) -> None:
    if engine.dialect.name == "postgresql":
        # Several hosts started together on a new database each create the missing tables; two
        # concurrent CREATE TABLEs make one fail (a unique violation in pg_type) and that host
        # does not boot. An advisory lock makes them take turns: the second finds the tables.
        with engine.begin() as connection:
            create_tables_in(connection)
        return
    with engine.connect() as connection:
        if _has_everything(connection):  # the usual start: nothing to create, no write lock taken
            return
    # SQLite: under the write lock, for the same reason. Each process looks for the tables in
    # a read, then creates them; a process that read before another wrote finds its read out of
    # date when it writes, and SQLite refuses it at once ("database is locked", the busy timeout
    # not waited), so of two `study serve` processes started together on a new study one failed.
    with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection, connection.begin():
        _create_missing(connection)


def create_tables_in(connection: Connection) -> None:
    """PostgreSQL: create_tables inside the caller's transaction, under the same advisory lock.
    `study copy-database` creates the tables and copies the rows in one transaction, so a copy
    that fails leaves not even empty tables behind."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
    _create_missing(connection)


def _has_everything(connection: Connection) -> bool:
    inspector = inspect(connection)
    if not {table.name for table in metadata.sorted_tables} <= set(inspector.get_table_names()):
        return False
    indexes = {index["name"] for found in inspector.get_multi_indexes().values() for index in found}
    declared = {index.name for table in metadata.sorted_tables for index in table.indexes}
    return declared <= indexes and not _missing_columns(connection)


def _create_missing(bind: Connection) -> None:
    earlier = set(inspect(bind).get_table_names())
    metadata.create_all(bind)
    _add_missing_columns(bind)
    # create_all adds indexes only with a new table: an index added to an existing table later
    # (suggestion_requests_by_time) is created here for databases made before it.
    for table in metadata.sorted_tables:
        for index in table.indexes:
            index.create(bind, checkfirst=True)
    if "sessions" in earlier and "survey_responses" not in earlier:
        # A database of a version before the survey engine: its answers are moved once, with
        # the table made for them.
        move_survey_answers(bind)


def _add_missing_columns(bind: Connection) -> None:
    # create_all leaves an existing table as it is: a column added to a table later
    # (server_activity.event_queue_max) is added here to databases made before it, from its
    # declaration, with its default, so the rows already there get it.
    for table, column in _missing_columns(bind):
        ddl = str(CreateColumn(column).compile(dialect=bind.dialect))
        if column.server_default is None and column.default is not None and column.default.is_scalar:
            # A NOT NULL column with only a Python default (sessions.missing_events): without a
            # DEFAULT here both SQLite and PostgreSQL refuse to add it to a table with rows, and
            # a study database made before it could no longer be opened by any command.
            value = literal(column.default.arg, column.type).compile(
                dialect=bind.dialect, compile_kwargs={"literal_binds": True}
            )
            ddl += f" DEFAULT {value}"
        bind.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {ddl}"))


def _missing_columns(bind: Connection) -> list[tuple[Table, Column]]:
    # Every table's columns in one query where the dialect can (PostgreSQL: one catalog query
    # instead of one per table, at every server start and command).
    found = inspect(bind).get_multi_columns(filter_names=[table.name for table in metadata.sorted_tables])
    present = {name: {column["name"] for column in columns} for (_schema, name), columns in found.items()}
    return [
        (table, column)
        for table in metadata.sorted_tables
        if table.name in present
        for column in table.columns
        if column.name not in present[table.name]
    ]
