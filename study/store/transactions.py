"""The study database's transactions: `writing` and `reading` are the only ways the toolkit
opens one. On SQLite a write waits for its turn (study.store.write_turn) and takes the write lock
up front; a served worker writes on one connection it keeps (keep_write_connection), as the
group writer of its event batches does on PostgreSQL (group_connection).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Connection, Engine, event

from study.store import checkpoints
from study.store import engine as store_engine
from study.store.write_turn import turn_of


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A transaction that will write: on SQLite it waits for its turn (WriteTurn), then takes
    the write lock up front, on the process's kept connection where the engine keeps one
    (keep_write_connection)."""
    turn = turn_of(engine)
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
def reading(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as connection:
        with connection.begin():
            yield connection


@contextmanager
def _driver_transaction(connection: Connection) -> Iterator[None]:
    """SQLite's write transaction, begun and committed on the driver: SQLAlchemy's transaction
    object and its events cost an event batch 16 us of CPU back to back and about 60 us on a
    worker that idled between requests, a twelfth of the batch (docs/benchmarks.md). A
    statement run through SQLAlchemy inside it has SQLAlchemy begin a transaction of its own
    as usual, whose BEGIN the driver is then spared (study.store.engine's `_begin`); that one commits or rolls back
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
    turn = turn_of(engine)
    if turn is not None:
        if not turn.keeps:
            turn.keeps = True
            event.listen(engine, "engine_disposed", _drop_kept_in_turn)
    elif engine.dialect.name == "postgresql" and not engine.__dict__.get(_KEEPS):
        engine.__dict__[_KEEPS] = True
        event.listen(engine, "engine_disposed", _drop_kept)


def _drop_kept_in_turn(engine: Engine) -> None:
    # Whoever disposes of the engine (before forking workers, before deleting a folder) means
    # every connection: the kept write connection too, once no transaction uses it.
    with turn_of(engine).held():
        _drop_kept(engine)


def hold_open(engine: Engine) -> None:
    """Open this process's kept write connection now rather than at its first write: a served
    worker then holds study.db open from its start, so `study copy-database` (which must be alone
    with the file, study.store.copy_database) sees a server no writer has reached yet. Its first
    writer would otherwise be stored in study.db after the copy, and never reach PostgreSQL.
    Only after the fork (a connection must not cross one); nothing to hold on PostgreSQL."""
    turn = turn_of(engine)
    if turn is not None and turn.keeps and turn.database is not None:
        _kept(engine)


def let_go(engine: Engine) -> None:
    """Close this process's kept write connection now (SQLite), as just before a fork: the
    child must not inherit an open connection (SQLite's locks and its shared-memory index are
    the process's, and a child of a process holding one would think them its own), and a
    `hold_open` after the fork opens the parent's and the child's own. Left open while this
    thread writes on it (a fork inside a write), which the child then leaves alone (`_kept`)."""
    turn = turn_of(engine)
    if turn is None or not turn.keeps or turn.taken():
        return
    with turn.held():  # another thread's write on it ends first
        _drop_kept(engine)


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
    # if the pool had left it idle (study.store.engine), and has no mark yet. The pool's idle
    # time, read when called (a test shortens it).
    if time.monotonic() - connection.info.get(_GROUP_USED, time.monotonic()) >= store_engine.IDLE_PING_SECONDS:
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
