"""SQLite's WAL checkpoints, run by one background thread per process instead of by a writer
while it holds the write turn.

In WAL mode every commit appends to `<database>-wal`, and by default the commit that takes the
WAL past 1,000 pages also copies them into the database file (a checkpoint) before it returns,
still holding the write lock. At a 1,000-writer launch that happened three or four times a
second and took 5-14 ms each time, and every writer of both worker processes waited behind it:
most of the tail of the acknowledgements and of a suggestion's two writes (docs/benchmarks.md).
A PASSIVE checkpoint needs no write lock, so here a thread copies the committed pages a few
times a second while the writers go on appending, and a writer checkpoints itself only as a
safety net, if the WAL has grown far past that (SAFETY_NET_PAGES). Every few seconds
of a launch (RESTART_PAGES) the thread copies the last pages with the write turn held, a few
ms, so that the next writer starts the WAL again from its beginning. That needs a moment with
no reader inside an older snapshot: readers that each scan a large table, back to back, rarely
leave one, and then the safety net is what bounds the WAL.

Nothing about durability changes: a commit is in the WAL, where a killed process cannot lose
it, before the writer answers; a checkpoint only moves it into the database file.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from urllib.parse import quote

# How often the thread looks for new commits to copy (seconds), and how soon it tries again
# when readers kept the WAL from starting again.
INTERVAL = 0.2
RETRY = 0.02
# A writer checkpoints the WAL itself past this many pages (SQLite's own default is 1,000):
# only if the thread cannot keep up.
SAFETY_NET_PAGES = 16_000
# The WAL is started again from its beginning once it holds this many pages (4 KiB each).
RESTART_PAGES = 8_000

logger = logging.getLogger(__name__)


class Checkpoints:
    """The databases this process wrote to since their last checkpoint, and the thread that
    checkpoints them. The thread starts with the first write and is stopped around a fork (a
    thread inside SQLite while the process forks could leave a lock held in the child)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        # In a forked child too: a lock another thread held at the fork would stay held there.
        self._lock = threading.Lock()
        self._written: set = set()  # study.store.write_turn.WriteTurn, one per database
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()  # the running thread's own

    def wrote(self, turn) -> None:
        """A write transaction committed on the database whose writers take `turn`
        (study.store.write_turn.WriteTurn)."""
        with self._lock:
            self._written.add(turn)
            if self._thread is None:
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), name="study-wal-checkpoints", daemon=True
                )
                self._thread.start()

    def pause(self) -> None:
        """Stop the thread (after the checkpoint it may be running); the next write starts it."""
        with self._lock:
            thread, self._thread = self._thread, None
            stop = self._stop
        if thread is not None:
            stop.set()
            thread.join()

    def _run(self, stop: threading.Event) -> None:
        wait = INTERVAL
        kept: dict[object, sqlite3.Connection] = {}  # by turn, while its database is written
        try:
            while not stop.wait(wait):
                with self._lock:
                    turns, self._written = self._written, set()
                _let_go(kept, turns)
                again = {turn for turn in turns if not checkpoint(turn, kept)}
                if again:  # readers kept the WAL from starting again: soon, not at the next round
                    with self._lock:
                        self._written |= again
                wait = RETRY if again else INTERVAL
        finally:
            for connection in kept.values():
                connection.close()


def checkpoint(turn, kept: dict) -> bool:
    """Copy the committed WAL pages of `turn`'s database into it beside its writers; once the
    WAL holds RESTART_PAGES, copy the rest with the write turn held so that the next writer
    starts the WAL again from its beginning. False when readers were still in the WAL then:
    the thread tries again soon. (Left to checkpoints beside the writers, the WAL is never
    started again while readers come and go, and grows for as long as the launch lasts.)

    `kept`: the thread's connections, by turn, taken and left there for the next round.
    Opening one cost 0.7 ms of CPU, more than the checkpoint itself at 200 writers (0.4-0.7 ms),
    five rounds a second in each worker; so the thread keeps its connection while the database
    is written (docs/benchmarks.md)."""
    connection = kept.pop(turn, None) or _connect(turn.database)
    if connection is None:
        return True
    busy = 0
    try:
        _, frames, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if frames >= RESTART_PAGES:
            with turn.held():
                (busy, _, _) = connection.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
    except sqlite3.Error as error:
        # Another process's checkpoint is running, or the database went away: the next one
        # catches up (on a new connection), and the writers' safety net holds the WAL's size
        # meanwhile.
        logger.debug("WAL checkpoint of %s skipped: %s", turn.database, error)
        connection.close()
        return True
    kept[turn] = connection
    return not busy


def _let_go(kept: dict, written: set) -> None:
    """Close the kept connections to databases not written since the last round. (A function
    of its own: a loop variable in `_run` would hold a turn, and its engine's lock file open.)"""
    for turn in set(kept) - written:
        kept.pop(turn).close()


def _connect(database: str) -> sqlite3.Connection | None:
    # mode=rw: a database deleted meanwhile (a test's temporary folder) is not created again.
    # timeout=0: a checkpoint never sleeps in SQLite's busy handler, least of all with the
    # write turn held.
    try:
        return sqlite3.connect(f"file:{quote(database)}?mode=rw", uri=True, isolation_level=None, timeout=0)
    except sqlite3.Error:
        return None


_checkpoints = Checkpoints()
wrote = _checkpoints.wrote
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_checkpoints.pause, after_in_child=_checkpoints.reset)
