"""The study database's engine, for SQLite (WAL, a private file, its pragmas, writers taking
turns) or PostgreSQL (a pool sized to the request threads, idle connections pinged) through one
SQLAlchemy URL, and that URL as the commands show it. Transactions are study.store.transactions';
the event API's statements on the driver, study.store.driver's. The tables are declared on
study.store.db's metadata and created by study.store.schema.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sqlite3
import time

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError

from study.store import checkpoints
from study.store.write_turn import give_turn


# Request threads per server process, unless `study serve --threads` says otherwise.
DEFAULT_THREADS = 16
# SQLite connections a process keeps open (see make_engine).
SQLITE_KEPT = 8

# A new database's first connections, in several processes started together, each switch it to
# WAL; SQLite refuses all but one of them at once ("database is locked", without its busy
# timeout). The mode is the file's: tried again, the others find it switched.
_WAL_TRIES = 100


def _into_wal(cursor) -> None:
    for tried in range(1, _WAL_TRIES + 1):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            busy = error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # extended codes keep it in the low byte
            if not busy or tried == _WAL_TRIES:
                raise
            time.sleep(0.01)  # opening a connection: no lock of ours is held


def shown_url(url: str | URL) -> str:
    """A database URL as the commands print it: every password hidden, in the address
    (user:password@) and among the query's parameters, where libpq takes one too
    (`?password=...`, the client key's `?sslpassword=...`)."""
    parsed = make_url(url)
    secret = [name for name in parsed.query if "password" in name.lower()]
    shown = parsed.difference_update_query(secret).render_as_string(hide_password=True)
    if secret:
        shown += ("&" if "?" in shown else "?") + "&".join(f"{name}=***" for name in secret)
    return shown


def digest(url: str | URL) -> str:
    """Which database a URL names, as a server may say it in public (`/healthz`): a digest of the
    URL with every password hidden, so that `study simulate --url` can tell that a server stores
    its sessions where the simulator marks them, and nobody learns the URL or its password."""
    return hashlib.sha256(shown_url(url).encode("utf-8")).hexdigest()[:16]


def without_password(url: str | URL) -> str:
    """`url` as a command takes it where the password comes from PGPASSWORD or ~/.pgpass: every
    password left out, in the address and among the query's parameters, and the driver's name
    too (`postgresql://`, as libpq's tools write it). URL.create, not URL.set: set() takes a
    password of None as "leave it as it is"."""
    parsed = make_url(url)
    bare = URL.create(parsed.get_backend_name(), parsed.username, None, parsed.host, parsed.port,
                      parsed.database, parsed.query)  # fmt: skip
    secret = [name for name in bare.query if "password" in name.lower()]
    return bare.difference_update_query(secret).render_as_string(hide_password=False)


def sqlite_file(url: str | URL) -> str | None:
    """The file of a SQLite database URL; None for PostgreSQL, an in-memory database or a
    `file:` URI (none of them a file the commands may look for beside the study)."""
    parsed = make_url(url)
    path = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return path


def _named_when_unopened(engine: Engine) -> None:
    """A connection that could not be opened (its server down, a damaged SQLite file) carries
    the database it was for, password hidden: the driver's own message may not name it
    ("file is not a database"), and the commands say which (study.cli)."""

    @event.listens_for(engine, "handle_error")
    def _name(context) -> None:
        if context.connection is None and context.sqlalchemy_exception is not None:
            context.sqlalchemy_exception.unopened_database = shown_url(engine.url)
            context.sqlalchemy_exception.unopened_fix = (
                _unwritable_folder(engine)
                or missing_database_fix(engine.url, context.original_exception)
                or _postgres_fix(engine.url, context.original_exception)
            )


def unopened_message(error: BaseException) -> str | None:
    """What a command or a server starting says of a database it could not open, with the
    fix, in words rather than the driver's traceback; None for any other error."""
    database = getattr(error, "unopened_database", None)
    if database is None:
        return None
    reason = " ".join(str(getattr(error, "orig", error)).split())
    reason += "" if reason.endswith((".", "?")) else "."
    fix = getattr(error, "unopened_fix", None) or (
        "Fix: start its server, or correct [study] database in study.toml (empty: study.db "
        "beside it); a damaged study.db: restore it from a backup."
    )
    return f"cannot open the study's database {database}: {reason} {fix}"


def missing_database_fix(
    url: URL, error: BaseException | None, otherwise: str = "correct [study] database in study.toml"
) -> str | None:
    """The fix when a PostgreSQL server answers but has no database of that name: the study
    creates its tables, never the database itself, so the operator must (or `otherwise`)."""
    if url.get_backend_name() != "postgresql" or error is None:
        return None
    # libpq's message at connection time carries no SQLSTATE to test; it reads
    # 'FATAL:  database "NAME" does not exist' (in English, the server's default lc_messages).
    if not re.search(r'database ".*" does not exist', str(error)):
        return None
    command = ["createdb"]
    for option, value in (("-h", url.host), ("-p", url.port), ("-U", url.username)):
        if value:
            command += [option, str(value)]
    command.append(url.database or "DBNAME")
    return (
        f"The study creates its tables, but not the database. Fix: create it "
        f"({shlex.join(command)}), or {otherwise}."
    )


def _postgres_fix(url: URL, error: BaseException | None) -> str | None:
    """The fix when PostgreSQL did not let the study in: the password (refused, or none given:
    the usual slip of a host whose environment lacks PGPASSWORD), or the server not answering.
    The fix for SQLite ("a damaged study.db") would send the operator to the wrong place."""
    if url.get_backend_name() != "postgresql" or error is None:
        return None
    # libpq's words at connection time (no SQLSTATE to test), in English by default.
    if re.search(r"password authentication failed|no password supplied", str(error)):
        user = url.username or "your user"
        where = ("correct the password in [study] database, or leave it out of the URL and give "
                 if url.password is not None else "give ")
        return (
            f"Fix: {where}{user}'s password as PGPASSWORD (or in ~/.pgpass, which PostgreSQL's "
            f"client library reads) to every command and server of the study."
        )
    host, port = url.host or "localhost", url.port or 5432
    return (
        f"Fix: start PostgreSQL at {host}:{port}, or check that it answers from this machine "
        f"(`pg_isready -h {host} -p {port}`), or correct [study] database in study.toml."
    )


def _unwritable_folder(engine: Engine) -> str | None:
    """Why a SQLite database in a folder that cannot be written (a read-only mount, an archived
    copy) does not open, and the fix: SQLite makes the WAL's -wal and -shm files beside it even
    to read it, and says only "unable to open database file", as for a damaged one."""
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or os.access(folder, os.W_OK):
        return None
    name = os.path.basename(path)
    return (
        f"The folder {folder} cannot be written, and SQLite writes {name}-wal and {name}-shm "
        f"beside the database even to read it. Fix: make the folder writable, or copy the study "
        f"folder where you can write and run the command on the copy."
    )


# A PostgreSQL pool keeps a connection for every request thread and _SPARE more, and opens up to
# _OVERFLOW beyond them for a moment.
_SPARE, _OVERFLOW = 2, 4


def connections_short(engine: Engine, processes: int, threads: int) -> str | None:
    """A warning for the operator when the PostgreSQL server lets fewer connections in than
    `processes` processes of `threads` request threads each may open (None on SQLite, or when
    it lets enough in). Past max_connections PostgreSQL refuses a new one ("too many clients
    already"), and the request that wanted it fails: a writer's batch, a suggestion."""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as connection:
        allowed = int(connection.exec_driver_sql("SHOW max_connections").scalar_one())
        reserved = int(connection.exec_driver_sql("SHOW superuser_reserved_connections").scalar_one())
    each = threads + _SPARE + _OVERFLOW
    needed = processes * each
    if needed <= allowed - reserved:
        return None
    return (
        f"Warning: PostgreSQL at {engine.url.host or 'the local socket'} lets {allowed - reserved} "
        f"connections in (max_connections {allowed}, {reserved} kept for superusers), and this "
        f"server's {processes} worker processes may open {needed} ({each} each: {threads} threads "
        f"and {_SPARE + _OVERFLOW} to spare); every other host of the study needs its own share. "
        f"Past it PostgreSQL refuses connections and writers' requests fail. Fix: raise it "
        f"(ALTER SYSTEM SET max_connections = {needed + reserved + 10}, then restart PostgreSQL), "
        f"or serve with fewer --workers or --threads."
    )


def make_engine(url: str, threads: int = DEFAULT_THREADS) -> Engine:
    """An engine for `url`, for a process with `threads` request threads; SQLite gets WAL, a
    busy timeout and explicit write locking."""
    if not url.startswith("sqlite"):
        # The pool keeps a connection for every request thread (each holds at most one at a
        # time) and two to spare, and opens up to four more for a moment. A pool smaller than
        # the threads closes each connection past its size as it comes back, so a busy process
        # opened a PostgreSQL connection (a new server process) for about one batch in four
        # at a 1,000-writer launch, and its acknowledgements waited (docs/benchmarks.md).
        # psycopg prepares no statement of its own: the hot ones are prepared by
        # study.store.pg_rounds, and psycopg would drop them with its own (DEALLOCATE ALL)
        # whenever a transaction on their connection rolls back.
        engine = create_engine(url, future=True, pool_size=threads + _SPARE, max_overflow=_OVERFLOW,
                               connect_args={"prepare_threshold": None})
        _ping_after_idle(engine)
        _named_when_unopened(engine)
        return engine
    _create_private(url)

    engine = create_engine(
        url,
        # The driver's own transaction handling is turned off so that we can say BEGIN IMMEDIATE
        # for writes (see _begin); a deferred transaction that reads and then writes can fail at
        # once with "database is locked" instead of waiting its turn.
        connect_args={"isolation_level": None, "check_same_thread": False, "timeout": 30},
        # Eight kept open, and more for a moment up to one for every request thread and two to
        # spare: a thread past the pool's limit would wait for a connection, up to 30 s.
        pool_size=SQLITE_KEPT,
        max_overflow=max(0, threads + 2 - SQLITE_KEPT),
        # The connection used last is handed out next: in WAL mode a connection's page cache
        # is emptied whenever another one has written, so the fewer connections take turns,
        # the more of each transaction's pages are still cached (a third of an event batch's CPU).
        pool_use_lifo=True,
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        _into_wal(cursor)
        # NORMAL is durable against a killed server process (the WAL is in the OS cache);
        # only a power cut can lose the last transactions.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        # The WAL is copied into the database file by a thread of this process, beside the
        # writers (study.store.checkpoints); a commit does it only if that falls far behind.
        cursor.execute(f"PRAGMA wal_autocheckpoint={checkpoints.SAFETY_NET_PAGES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        # Straight to the driver: every event batch begins a transaction, and SQLAlchemy's
        # statement machinery costs several times the BEGIN itself (docs/benchmarks.md).
        driver = connection.connection.driver_connection
        if not driver.in_transaction:  # else begun already, by a `writing` transaction
            driver.execute(f"BEGIN {mode}")

    give_turn(engine, make_url(url).database)
    _named_when_unopened(engine)
    return engine


# A pooled connection that sat unused this long is pinged before it is handed out.
IDLE_PING_SECONDS = 10.0


def _ping_after_idle(engine: Engine) -> None:
    """Hand out only live connections, pinging one only when it has sat idle: SQLAlchemy's
    pool_pre_ping pings on every checkout, a round trip to PostgreSQL per transaction, and the
    event API checks out a connection twice per batch (its read and its group's write). A
    connection in steady use was alive a moment ago; one that idled through a database restart
    or a dropped link fails its ping, and the pool opens a fresh one instead."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy) -> None:
        if time.monotonic() - record.info.get("idle_since", 0.0) < IDLE_PING_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as error:
            if engine.dialect.is_disconnect(error, dbapi_connection, None):
                raise DisconnectionError(str(error)) from error
            raise


def _create_private(url: str) -> None:
    """Create a new SQLite file readable by its owner only (0600): it holds worker ids and
    everything participants wrote. SQLite gives the -wal and -shm files it makes next to it the
    database file's permissions, so they are private too. An existing file is left as it is."""
    path = make_url(url).database
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError:
        return  # e.g. a missing folder: SQLite's own error will name it
    os.close(descriptor)
