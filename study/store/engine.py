"""The study database's engine and transactions: SQLite (WAL, private files, writers taking
turns) or PostgreSQL through one SQLAlchemy URL. `writing` and `reading` are the only ways the
toolkit opens a transaction; the event API's hot path reads and writes on the driver directly
(`driver_fetch`, `driver_read`). The tables are declared on study.store.db's metadata and
created by study.store.schema.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError

from study.store import checkpoints


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
            context.sqlalchemy_exception.unopened_fix = _unwritable_folder(engine)


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
        engine = create_engine(url, future=True, pool_size=threads + 2, max_overflow=4,
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

    _write_turns[engine] = WriteTurn(make_url(url).database)
    _named_when_unopened(engine)

    @event.listens_for(engine, "engine_disposed")
    def _disposed(disposed: Engine) -> None:
        # Whoever disposes of the engine (before forking workers, before deleting a folder)
        # means every connection: the kept write connection too, once no transaction uses it.
        turn = _write_turns[disposed]
        if turn.keeps:
            with turn.held():
                _drop_kept(disposed)

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


class WriteTurn:
    """SQLite's writers take turns here, before BEGIN IMMEDIATE, so none waits in SQLite's busy
    handler: that handler polls, sleeping 1, 2, 5, ... up to 100 ms between tries, so a writer
    can sleep long after the lock is free and the tail of every write grows with the number of
    writers. Here the threads of one process queue on a lock, and one thread per process at a
    time on an flock() of `<database>-lock`; both wake the next waiter the moment the turn ends.
    The kernel drops a killed process's flock, so a crash leaves nothing held. Processes that do
    not take the turn (the sqlite3 shell) still meet the busy timeout as before."""

    def __init__(self, database: str | None) -> None:
        self.path = self.database = None
        self.keeps = False  # the holder writes on the process's kept connection (keep_write_connection)
        if database and database != ":memory:" and not database.startswith("file:"):
            self.database = database
            self.path = database + "-lock"
        self._pid = -1
        self._reset()

    def _reset(self) -> None:
        # After a fork the child needs its own lock and its own open file: flock() belongs to
        # the open file, which parent and child would otherwise share, and hold together.
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._descriptor: int | None = None

    def _file(self) -> int | None:
        if self.path is None:
            return None
        if self._descriptor is None:
            try:
                self._descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                self.path = None  # a read-only folder: SQLite's own locking still holds
                return None
            # Closed with the turn (its engine gone), not at the process's exit: a test suite or
            # a notebook makes and drops many engines. (After a fork, the child's copy closing
            # leaves the parent's flock alone: it is released once every copy is closed.)
            weakref.finalize(self, os.close, self._descriptor)
        return self._descriptor

    def taken(self) -> bool:
        """Whether this thread holds the turn already (a write inside a write)."""
        return os.getpid() == self._pid and getattr(self._local, "depth", 0) > 0

    @contextmanager
    def held(self) -> Iterator[None]:
        if os.getpid() != self._pid:
            self._reset()
        depth = getattr(self._local, "depth", 0)
        if depth:  # a write inside a write of the same thread: the turn is already ours
            yield
            return
        with self._lock:
            descriptor = self._file()
            if descriptor is not None:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            self._local.depth = 1
            try:
                yield
            finally:
                self._local.depth = 0
                if descriptor is not None:
                    fcntl.flock(descriptor, fcntl.LOCK_UN)


_write_turns: "weakref.WeakKeyDictionary[Engine, WriteTurn]" = weakref.WeakKeyDictionary()


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


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A transaction that will write: on SQLite it waits for its turn (WriteTurn), then takes
    the write lock up front, on the process's kept connection where the engine keeps one
    (keep_write_connection)."""
    turn = _write_turns.get(engine)
    if turn is None:  # PostgreSQL
        with engine.connect() as connection, connection.begin():
            yield connection
        return
    inside = turn.taken()  # a write inside a write: the kept connection is the outer one's
    with turn.held():
        if turn.keeps and turn.database is not None and not inside:
            connection = _kept(engine)
            try:
                with _driver_transaction(connection):
                    yield connection
            except BaseException:
                _drop_kept(engine)  # a connection that failed is not trusted again
                raise
        else:
            with _pooled_transaction(engine) as connection:
                yield connection
    if turn.database is not None:
        checkpoints.wrote(turn)  # copied into the database file by the process's thread


@contextmanager
def _driver_transaction(connection: Connection) -> Iterator[None]:
    """SQLite's write transaction, begun and committed on the driver: SQLAlchemy's transaction
    object and its events cost an event batch 16 us of CPU back to back and about 60 us on a
    worker that idled between requests, a twelfth of the batch (docs/benchmarks.md). A
    statement run through SQLAlchemy inside it has SQLAlchemy begin a transaction of its own
    as usual, whose BEGIN the driver is then spared (`_begin`); that one commits or rolls back
    the driver's transaction in its place."""
    driver = connection.connection.driver_connection
    driver.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if connection.in_transaction():
            connection.rollback()
        elif driver.in_transaction:
            driver.rollback()
        raise
    if connection.in_transaction():
        connection.commit()
    else:
        driver.execute("COMMIT")


@contextmanager
def _pooled_transaction(engine: Engine) -> Iterator[Connection]:
    """A SQLite write transaction on a connection from the pool, given back after it."""
    with engine.connect() as connection, _driver_transaction(connection):
        yield connection


def keep_write_connection(engine: Engine) -> None:
    """Have the holder of SQLite's write turn write on one connection this process keeps,
    instead of checking one out of the pool and back in for every transaction: about 16 us of
    SQLAlchemy's machinery a transaction (`writing` 34 us to 18), a tenth of an event batch's
    CPU in one process (0.41-0.46 ms to 0.37-0.38). On PostgreSQL the same for the group
    writer of the event batches (`group_connection`). For `study serve`'s workers, whose engine
    lives as long as the process: the connection is kept as an attribute of the engine, and
    SQLAlchemy's engines sit in reference cycles, so an engine made and dropped (a test, a
    notebook) would hold a second open connection until the garbage collector's next full pass.
    After a fork, the child opens its own and leaves the parent's alone (`_inherited`: a
    connection must not be closed, nor used, across a fork; a psycopg one would end the
    parent's session)."""
    turn = _write_turns.get(engine)
    if turn is not None:
        turn.keeps = True
    elif engine.dialect.name == "postgresql" and not engine.__dict__.get(_KEEPS):
        engine.__dict__[_KEEPS] = True
        event.listen(engine, "engine_disposed", _drop_kept)


def hold_open(engine: Engine) -> None:
    """Open this process's kept write connection now rather than at its first write: a served
    worker then holds study.db open from its start, so `study copy-database` (which must be alone
    with the file, study.store.copy_database) sees a server no writer has reached yet. Its first
    writer would otherwise be stored in study.db after the copy, and never reach PostgreSQL.
    Only after the fork (a connection must not cross one); nothing to hold on PostgreSQL."""
    turn = _write_turns.get(engine)
    if turn is not None and turn.keeps and turn.database is not None:
        _kept(engine)


@contextmanager
def group_connection(engine: Engine) -> Iterator[Connection]:
    """The connection for one PostgreSQL transaction of the process's group writer
    (study.store.group_commit: one leader at a time): the one the process keeps where
    `keep_write_connection` asked for it, else one from the pool, given back after. The pool's
    checkout and checkin cost a group 47 us of CPU in one process (docs/benchmarks.md). The
    kept connection gets what the pool would give it: a ping after an idle spell (the database
    may have restarted meanwhile), and it is let go after a transaction that failed."""
    if not engine.__dict__.get(_KEEPS):
        with engine.connect() as connection:
            yield connection
        return
    connection = _kept(engine)
    # Its own mark, not the pool's "idle_since": a connection just made was pinged at checkout
    # if the pool had left it idle (_ping_after_idle), and has no mark yet.
    if time.monotonic() - connection.info.get(_GROUP_USED, time.monotonic()) >= IDLE_PING_SECONDS:
        try:
            engine.dialect.do_ping(connection.connection.dbapi_connection)
        except engine.dialect.loaded_dbapi.Error:
            _drop_kept(engine)
            connection = _kept(engine)
    try:
        yield connection
    except BaseException:
        _drop_kept(engine)
        raise
    if connection.invalidated:
        _drop_kept(engine)
    else:
        connection.info[_GROUP_USED] = time.monotonic()


_GROUP_USED = "study_group_writer_used_at"
_KEPT = "_study_kept_write_connection"
_KEEPS = "_study_keeps_group_connection"  # PostgreSQL's (SQLite's: WriteTurn.keeps)
_inherited: list[Connection] = []


def _kept(engine: Engine) -> Connection:
    kept = engine.__dict__.get(_KEPT)
    if kept is not None and kept[0] == os.getpid() and not kept[1].closed and not kept[1].invalidated:
        return kept[1]
    if kept is not None and kept[0] != os.getpid():
        _inherited.append(kept[1])
    connection = engine.connect()
    engine.__dict__[_KEPT] = (os.getpid(), connection)
    return connection


def _drop_kept(engine: Engine) -> None:
    kept = engine.__dict__.pop(_KEPT, None)
    if kept is None:
        return
    if kept[0] != os.getpid():
        _inherited.append(kept[1])
    else:
        # Closed now, not handed back to the pool: a disposed engine's old pool would keep it
        # open until it is garbage collected.
        kept[1].invalidate()
        kept[1].close()


def take_turn(connection: Connection, name: str) -> None:
    """Inside a write transaction: wait until no other transaction anywhere holds the turn for
    `name`, and hold it until this one ends. Counts that are read, then written (a throttle's)
    need it on PostgreSQL, which lets writers run side by side; on SQLite the write lock that
    every `writing` transaction takes up front already makes them take turns."""
    if connection.dialect.name != "postgresql":
        return
    number = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    connection.execute(text("SELECT pg_advisory_xact_lock(:number)"), {"number": number})


def clock(connection: Connection) -> float:
    """Now, in seconds since the epoch, by the clock of the database's host on PostgreSQL, which
    several hosts share while their own clocks may disagree (a count of the last hour taken by
    one host an hour ahead would forget every other host's); a SQLite file has one host."""
    if connection.dialect.name != "postgresql":
        return time.time()
    return connection.execute(text("SELECT extract(epoch FROM clock_timestamp())::float8")).scalar_one()


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


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as connection:
        with connection.begin():
            yield connection
