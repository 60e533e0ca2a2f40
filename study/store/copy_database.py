"""`study copy-database`: a study piloted on SQLite (study.db) moved, whole, into an empty
PostgreSQL database, so that the main round can be served from several hosts without starting
over: its sessions and events, reviewers and ratings, HITs, assignments, qualifications and the
payment ledgers (which must remember what they paid, or a re-run would pay twice).

Every table of study.store.db's metadata is copied, so a table added later is copied with the
rest. The target's tables are made as `study serve` makes them (create_tables), and the rows
copied into them, in one transaction: a copy that fails leaves the target as it was. The
source is read in one read transaction (one state of the file, whatever is committed during
the copy), and a copy during which anything was committed to study.db is rolled back.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, Engine, func, insert, inspect, select, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from study.store import create_tables, make_engine
from study.store.holders import holders, named
from study.store.activity import server_activity
from study.store.db import metadata
from study.store.engine import missing_database_fix, shown_url, sqlite_file
from study.store.schema import create_tables_in

# A server process adds a row to server_activity at least once a minute while it answers
# requests (study.server.activity); `study status` calls the last minute's rows live.
LIVE_SECONDS = 60
# How long the copy tries to have study.db to itself (_alone), in seconds.
ALONE_SECONDS = 1.0
# Rows read from study.db and inserted into PostgreSQL per statement.
BATCH_ROWS = 1000
# What study.toml is shown in place of the password, which this command never prints.
PASSWORD_PLACEHOLDER = "PASSWORD"


class CopyError(Exception):
    """A copy refused or failed, said with its fix; the target was left as it was."""


@dataclass(frozen=True)
class Copied:
    source: Path
    target: str  # shown_url: the password hidden
    rows: dict[str, int]  # table -> rows, as read back from PostgreSQL after the commit
    database: str  # [study] database for study.toml, the password a placeholder
    password_given: bool  # the URL held a password (else libpq finds it: PGPASSWORD, ~/.pgpass)
    not_copied: list[str] = field(default_factory=list)  # tables in study.db this version does not know


def copy_database(source_url: str, to: str, *, now: float | None = None) -> Copied:
    """Copy the SQLite study database at `source_url` into the empty PostgreSQL database at
    `to`. Raises CopyError."""
    source = _source_file(source_url)
    target_url, password = _postgresql(to)
    # What study.db alone can refuse comes before PostgreSQL is asked anything: a researcher whose
    # server still runs is told so at once (not after a connection's timeout, nor that PostgreSQL
    # is unreachable while the copy could not go ahead anyway).
    _alone(source)
    reader = make_engine(f"sqlite:///{source}", threads=1)
    try:
        # As every command does: a study.db of an earlier version gains what this one declares
        # (tables, columns with their defaults), so every table below can be read whole.
        create_tables(reader)
        _not_served(reader, source, time.time() if now is None else now)
        target = _reached(target_url, password)
        try:
            copied = _copied(reader, target, source, password)
            not_copied = sorted(set(inspect(reader).get_table_names()) - set(metadata.tables))
            rows = _verified(target, copied, password)
        finally:
            target.dispose()
    finally:
        reader.dispose()
    return Copied(source=source, target=shown_url(target_url), rows=rows, database=study_toml_url(target_url),
                  password_given=password is not None, not_copied=not_copied)  # fmt: skip


def study_toml_url(url: str | URL) -> str:
    """`url` as [study] database would hold it, with PASSWORD_PLACEHOLDER for its password
    (from the address or from `?password=`): the command prints it, and never a password."""
    parsed = make_url(url)
    bare = parsed.difference_update_query([name for name in parsed.query if name.lower() == "password"])
    given = parsed.password is not None or len(bare.query) != len(parsed.query)
    password = PASSWORD_PLACEHOLDER if given and parsed.username else None
    return URL.create(bare.drivername, bare.username, password, bare.host, bare.port, bare.database,
                      bare.query).render_as_string(hide_password=False)  # fmt: skip


def _source_file(source_url: str) -> Path:
    path = sqlite_file(source_url)
    if path is None:
        raise CopyError(
            f"[study] database is {shown_url(source_url)}, not a SQLite file: study copy-database "
            f"copies a study piloted on SQLite (study.db) into PostgreSQL. Fix: to move a PostgreSQL "
            f"study, use `study backup` (pg_dump) and pg_restore into the new database."
        )
    if not Path(path).is_file():
        raise CopyError(f"{path} does not exist: the study has not been served yet, so there is nothing "
                        f"to copy. Fix: set [study] database in study.toml to the PostgreSQL URL and serve it.")
    return Path(path)


def _postgresql(to: str) -> tuple[URL, str | None]:
    """The target's URL (psycopg, the driver the toolkit installs, where none is named) and its
    password apart, for hiding it from every message."""
    try:
        parsed = make_url(to)
    except ArgumentError:
        # Not echoed: a mistyped URL may still hold a password.
        raise CopyError("--to is not a database URL. Fix: give PostgreSQL's, e.g. "
                        "--to postgresql://user@host:5432/dbname (the password in PGPASSWORD).") from None
    kind, _, driver = parsed.drivername.partition("+")
    if kind not in ("postgresql", "postgres"):
        raise CopyError(f"--to {shown_url(parsed)} is not a PostgreSQL database: study copy-database copies "
                        f"into PostgreSQL only. Fix: --to postgresql://user@host:5432/dbname.")
    if not parsed.database:
        raise CopyError(f"--to {shown_url(parsed)} names no database. Fix: end it with /DBNAME, a new "
                        f"database made for the study (createdb DBNAME).")
    parsed = parsed.set(drivername=f"postgresql+{driver or 'psycopg'}")
    password = parsed.password or parsed.query.get("password")
    if isinstance(password, tuple):  # a parameter given twice: libpq takes the last
        password = password[-1]
    return parsed, password


def _where(url: URL) -> str:
    host = url.host or url.query.get("host") or "the local socket"
    return f"{host}:{url.port or 5432} (database '{url.database}', user '{url.username or 'yours'}')"


def _said(error: BaseException, password: str | None) -> str:
    """The driver's message in one line, the password hidden should it ever be in it."""
    said = " ".join(str(getattr(error, "orig", None) or error).split())
    return said.replace(password, "***") if password else said


def _reached(url: URL, password: str | None) -> Engine:
    try:
        engine = make_engine(url.render_as_string(hide_password=False), threads=1)
    except ModuleNotFoundError as error:
        raise CopyError(f"PostgreSQL's driver ({error.name}) is not installed. Fix: "
                        f"pip install -e '.[postgres]' (psycopg).") from None
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as error:
        engine.dispose()
        fix = missing_database_fix(url, error.orig, otherwise="name an existing one in --to") or (
            "Fix: check the host, port and database name, that the server accepts connections from "
            "this machine, and the user's password.")
        raise CopyError(f"cannot reach PostgreSQL at {_where(url)}: {_said(error, password)} Nothing was "
                        f"copied. {fix}") from None
    return engine


def _alone(source: Path) -> None:
    """Refuse while any other program has study.db open: a server that no writer has reached
    since it started writes no activity row (`_not_served` cannot see it), but its pooled
    connections hold the database open, and a writer arriving after the copy would store into
    study.db what PostgreSQL never gets. In WAL mode every open connection holds a shared lock
    on the file, so a connection in exclusive locking mode can read only when it is the only one.
    (This process's own WAL checkpoint thread lets go of its connection within a round,
    study.store.checkpoints.INTERVAL: hence a second of tries.)"""
    deadline = time.monotonic() + ALONE_SECONDS
    while True:
        probe = sqlite3.connect(f"file:{quote(str(source))}?mode=rw", uri=True, isolation_level=None, timeout=0)
        try:
            probe.execute("PRAGMA locking_mode=EXCLUSIVE")
            probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise CopyError(f"{source} cannot be read: {error}. Nothing was copied.") from None
            if time.monotonic() > deadline:
                raise CopyError(_held_open(source)) from None
        finally:
            probe.close()
        time.sleep(0.05)


def _held_open(source: Path) -> str:
    """The refusal when another program has study.db open, naming its processes where Linux's
    /proc tells them (study.store.holders), else the programs it may be."""
    found = holders(source)
    if found:
        # The process named is the one to stop: a server's master, whose workers stop with it.
        which, stop = named(found), "stop " + ("it" if len(found) == 1 else "them")
    else:
        which = ("a `study serve` of the study (even one no writer has reached yet), `study review`, "
                 "gunicorn, or a sqlite3 shell")
        stop = "stop every program that has it open"
    return (f"{source} is open in another program: {which}. A writer who arrived after the copy would be "
            f"stored in study.db and not in PostgreSQL. Nothing was copied. Fix: {stop}, then run this again.")


def _not_served(reader: Engine, source: Path, now: float) -> None:
    """Refuse while servers answer from study.db: what their writers store during the copy, or
    after it, would be missing from PostgreSQL."""
    with reader.connect() as connection:
        rows = connection.execute(
            select(server_activity.c.process, func.max(server_activity.c.ended_at))
            .where(server_activity.c.ended_at > now - LIVE_SECONDS)
            .group_by(server_activity.c.process)
        ).all()
    if not rows:
        return
    last = max(ended for _process, ended in rows)
    names = ", ".join(sorted(process for process, _ended in rows))
    again = time.strftime("%H:%M:%S", time.localtime(last + LIVE_SECONDS))
    raise CopyError(
        f"{source} is being served: {len(rows)} server process(es) answered requests in the last "
        f"minute ({names}; `study status` shows them). What writers store meanwhile would be missing "
        f"from the copy. Nothing was copied. Fix: stop every `study serve` (and gunicorn) of the study, "
        f"then run this again after {again}, a minute after the last answer."
    )


def _copied(reader: Engine, target: Engine, source: Path, password: str | None) -> dict[str, int]:
    """Every table's rows from study.db into the target, in one transaction on each side; the
    rows copied per table."""
    with target.connect() as writer, reader.connect() as connection:
        transaction = writer.begin()
        try:
            create_tables_in(writer)
            _target_empty(writer, target)
            before = _data_version(connection)
            with connection.begin():  # one read transaction: one state of study.db
                copied = {table.name: _table_copied(connection, writer, table, target, password)
                          for table in metadata.sorted_tables}  # fmt: skip
            if _data_version(connection) != before:
                raise CopyError(
                    f"{source} changed while it was copied: a server (or another program) wrote to it. "
                    f"Nothing was copied. Fix: stop every `study serve` of the study, and run this again."
                )
            _sequences_past_copied_ids(writer)
            transaction.commit()
        except BaseException:
            transaction.rollback()
            raise
    return copied


def _target_empty(writer: Connection, target: Engine) -> None:
    held = {table.name: writer.execute(select(func.count()).select_from(table)).scalar_one()
            for table in metadata.sorted_tables}  # fmt: skip
    held = {name: count for name, count in held.items() if count}
    if held:
        listed = ", ".join(f"{name} {count:,}" for name, count in held.items())
        raise CopyError(
            f"{shown_url(target.url)} already holds a study's rows ({listed}): study copy-database copies "
            f"into an empty database only, and never merges nor overwrites. Nothing was copied. Fix: copy "
            f"into a new database (createdb NEWNAME, then --to .../NEWNAME); if these rows are an earlier "
            f"copy you mean to replace, drop that database first."
        )


def _table_copied(connection: Connection, writer: Connection, table, target: Engine, password: str | None) -> int:
    count = 0
    result = connection.execution_options(yield_per=BATCH_ROWS).execute(
        select(table).order_by(*table.primary_key.columns)
    )
    try:
        for rows in result.partitions():
            writer.execute(insert(table), [dict(row._mapping) for row in rows])
            count += len(rows)
    except SQLAlchemyError as error:
        raise CopyError(
            f"copying table {table.name} into {shown_url(target.url)} failed after {count:,} rows: "
            f"{_said(error, password)} Nothing was copied (the transaction was rolled back). Fix: "
            f"correct the row it names in study.db, or report it as a bug with this message."
        ) from None
    return count


def _data_version(connection: Connection) -> int:
    """SQLite's count of commits by other connections to the file, as this one has seen them."""
    return connection.connection.driver_connection.execute("PRAGMA data_version").fetchone()[0]


def _sequences_past_copied_ids(writer: Connection) -> None:
    """Each serial or identity column's sequence set past the largest id copied, so the next
    row the servers insert does not collide with a copied one."""
    found = writer.execute(text(
        "SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) "
        "FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY(:names)"
    ), {"names": list(metadata.tables)}).all()  # fmt: skip
    quote = writer.dialect.identifier_preparer.quote
    for table, column, sequence in found:
        if sequence is not None:
            writer.execute(text(f"SELECT setval(:sequence, coalesce(max({quote(column)}), 1), max({quote(column)}) "
                                f"IS NOT NULL) FROM {quote(table)}"), {"sequence": sequence})  # fmt: skip


def _verified(target: Engine, copied: dict[str, int], password: str | None) -> dict[str, int]:
    """The rows of every table as a new connection reads them after the commit, as each host
    will: they must be the rows read from study.db."""
    with target.connect() as connection:
        stored = {name: connection.execute(select(func.count()).select_from(metadata.tables[name])).scalar_one()
                  for name in copied}  # fmt: skip
    differ = [f"{name}: {copied[name]:,} copied, {stored[name]:,} stored" for name in copied if copied[name] != stored[name]]
    if differ:
        raise CopyError(
            f"the copy was committed, but {shown_url(target.url)} does not hold what was copied "
            f"({'; '.join(differ)}): something else wrote to it meanwhile. Fix: stop whatever serves that "
            f"database, drop it, and copy into a new one."
        )
    return stored
