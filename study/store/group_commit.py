"""Group commit: the event batches that arrive together are stored in one transaction.

At a 1,000-writer launch the event API stores about a thousand batches a second. Each in its
own transaction, every batch would take the write turn (study.store.engine.WriteTurn), begin,
commit and hand the turn on; and a request thread holding the turn must also win the GIL back
from every other request thread of its process before it can let go, so the turn is held far
longer than its few statements take, and the batches queue behind it (issue 17).

Here the batches waiting in a process go in together, written by whichever of their request
threads comes first (the leader): it takes everything waiting, takes the write turn once, runs
each item's work in one transaction, commits, and only then wakes the others, each with its own
answer. A batch that arrives alone is written by its own thread, with no hand-off to another
thread. An acknowledgement still means the batch is committed (nothing is answered before the
COMMIT returns), and a batch its check refuses is refused alone: the work returns its refusal
instead of raising, having written nothing. Should the transaction itself fail (a full disk, a
PostgreSQL error, which ends the whole transaction), every item of the group gets the error and
nothing of it is stored: their browsers send the batches again.

That is SQLite's way, where one writer at a time holds the whole file. PostgreSQL lets writers
run side by side (each batch locks only its session's row) and groups commits in its own WAL,
so there each batch is written in its own transaction on its own request thread: a leader
sending a group's statements one round trip after another would make the process's writes
take turns for nothing (at 1,000 writers that held a launch to 260 batches a second).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine

from study.store.engine import writing

# Items written in one transaction at most: a group is also the latency of its last item.
MAX_GROUP = 128


class _Item:
    __slots__ = ("done", "error", "result", "work")

    def __init__(self, work: Callable[[Connection], Any]) -> None:
        self.work = work
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None


class _Queue:
    """The items of one engine in one process, and whether a leader is writing."""

    def __init__(self) -> None:
        self.waiting: deque[_Item] = deque()
        self.changed = threading.Condition(threading.Lock())
        self.writing = False


# Per engine (weakly: a test suite makes and drops many), the queue of this process: a forked
# worker makes its own.
_queues: weakref.WeakKeyDictionary[Engine, tuple[int, _Queue]] = weakref.WeakKeyDictionary()
_queues_lock = threading.Lock()


def _queue(engine: Engine) -> _Queue:
    found = _queues.get(engine)  # every batch asks: the lock only when a queue is made
    if found is not None and found[0] == os.getpid():
        return found[1]
    with _queues_lock:
        pid, queue = _queues.get(engine, (None, None))
        if pid != os.getpid():
            pid, queue = _queues[engine] = (os.getpid(), _Queue())
    return queue


def run(engine: Engine, work: Callable[[Connection], Any]) -> Any:
    """`work(connection)` run in a write transaction shared with the other items waiting in
    this process; its result once that transaction is committed, or the error that stopped it.

    `work` must not raise for a refusal of its own (return it: an exception rolls back the whole
    group), and the caller must not be inside a `writing` transaction (the leader would wait for
    the turn its caller holds)."""
    item = _Item(work)
    if engine.dialect.name == "sqlite":
        _grouped(engine, item)
    else:  # side by side (module docstring)
        _write(engine, [item])
    if item.error is not None:
        raise item.error
    return item.result


def _grouped(engine: Engine, item: _Item) -> None:
    """Queue `item` in this process and return once a group holding it is written."""
    queue = _queue(engine)
    with queue.changed:
        queue.waiting.append(item)
        while not item.done:
            if queue.writing:
                queue.changed.wait()
                continue
            # No group is being written: this thread leads the next one (it holds at most
            # MAX_GROUP items, so a leader whose own item did not fit leads another).
            queue.writing = True
            group = [queue.waiting.popleft() for _ in range(min(MAX_GROUP, len(queue.waiting)))]
            queue.changed.release()
            try:
                _write(engine, group)
            finally:
                queue.changed.acquire()
                for member in group:
                    member.done = True
                queue.writing = False
                queue.changed.notify_all()


def _write(engine: Engine, group: list[_Item]) -> None:
    try:
        with writing(engine) as connection:
            for item in group:
                item.result = item.work(connection)
    except BaseException as error:  # noqa: BLE001 - nothing of the group is stored; every item says so
        for item in group:
            item.error = error
