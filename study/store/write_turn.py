"""SQLite's writers take turns: one WriteTurn per database file, which every `writing`
transaction (study.store.transactions) holds before BEGIN IMMEDIATE, and the WAL's copying
thread (study.store.checkpoints) holds to copy the last pages. PostgreSQL's engines have none.
"""

from __future__ import annotations

import fcntl
import os
import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Engine


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


def _own_turns_after_fork() -> None:
    """In a forked child, while it has one thread: every turn gets the child's lock and file now.
    Left to `held`, the first requests of a worker `study serve` just forked, arriving on several
    threads at once, could each find the turn the parent's and each make it anew: a lock and an
    open file per thread, the files left open, and a thread already inside the turn no longer
    seen there by `taken`."""
    for turn in list(_write_turns.values()):
        turn._reset()


os.register_at_fork(after_in_child=_own_turns_after_fork)


def give_turn(engine: Engine, database: str | None) -> None:
    """Have the writers of SQLite `engine` take turns on `database` (its file)."""
    _write_turns[engine] = WriteTurn(database)


def turn_of(engine: Engine) -> WriteTurn | None:
    """The turn `engine`'s writers take; None on PostgreSQL."""
    return _write_turns.get(engine)
