"""Group commit: the event batches that arrive together are stored in one transaction.

At a 1,000-writer launch the event API stores about a thousand batches a second. Each in its
own transaction, every batch would take the write turn (study.store.write_turn.WriteTurn), begin,
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
run side by side, so there a plain `run` writes its work in its own transaction on its own
request thread: a leader sending a group's statements one round trip after another would make
the process's writes take turns for nothing (at 1,000 writers that held a launch to 260
batches a second). Work written as stages (`run_staged`: the event batches) is grouped on
both: each stage names the statements it needs next, and the leader sends every item's
statements of a stage together in one round trip (study.store.pg_rounds, libpq's pipeline,
the BEGIN leading the first), so a group of batches costs three round trips (its statements,
the inserts, COMMIT) where each batch alone cost six, each of them a wait for the server and
then for its process's GIL (issue 17); and one when each of its batches follows what its
worker last stored (study.store.events.ingest, "in one round trip"). A staged item has a key
(its session id): items of one key take their stages one item after the other, so each reads
what the one before wrote (a browser's resend can share a group with its original), and items
run in key order, so two groups lock sessions' rows in the same order and cannot deadlock.

A model call's rows (study.server.model_calls: the request counted before the model is asked,
its outcome after) go `ahead`: a participant is waiting on them with the suggestion on hold,
where a batch's browser only waits for an acknowledgement it does not show. On SQLite they are
written in a group of their own before the batches waiting beside them (the call then waits
for the group being written and its own few statements, not for a hundred batches' checks:
issue 17's 20 ms budget for the server's part of a suggestion); on PostgreSQL in a transaction
of their own. Model calls are few (each holds a slot, study.server.model_calls), so the
batches are not held back for long.
"""

from __future__ import annotations

import _thread
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine

from study.store.driver import driver_fetch
from study.store.transactions import group_connection, writing

# Items written in one transaction at most: a group is also the latency of its last item.
MAX_GROUP = 128


# Statements a stage sends ((sql with `?` placeholders, parameters), ...), and the rows of each.
Statements = Sequence[tuple[str, Sequence]]
Rows = list[list[tuple]]
# Work in stages: yields the statements it needs next, is sent their rows, returns its result.
StagedWork = Callable[[Connection], Generator[Statements, Rows, Any]]
# How a group's stage is sent: the statements of each item, and whether it is the last round.
Send = Callable[[list[Statements], bool], list[Rows]]


class Last(list):
    """A work's last stage, yielded as `Last([...])`: it returns once given the rows. On
    PostgreSQL, a round of last stages carries the transaction's COMMIT, one round trip fewer
    for a transaction the participant waits on (a model call's admission, its outcome)."""


class _Item:
    __slots__ = ("done", "error", "key", "result", "staged", "waiter", "work")

    def __init__(self, work: Callable[[Connection], Any], staged: bool = False, key: str | None = None) -> None:
        self.work = work
        self.staged, self.key = staged, key
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None
        # Held while the item's thread sleeps behind a group being written; released to wake
        # that thread alone (`_wake`).
        self.waiter: _thread.LockType | None = None


class _Queue:
    """The items of one engine in one process, and whether a leader is writing."""

    def __init__(self) -> None:
        self.waiting: deque[_Item] = deque()
        self.ahead: deque[_Item] = deque()  # written before `waiting` (module docstring)
        self.lock = threading.Lock()  # over all of the above and below
        self.writing = False
        self.deepest = 0  # the most of `waiting` at once behind a group, since last asked


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


def deepest_waiting(engine: Engine) -> int:
    """The most event batches that waited at once in this process behind a group being written,
    since the last call (0: none waited), and counting starts again. `study status` shows it to
    the operator of a launch beside the event batches' latency (study.server.activity): a queue
    that grows means the database, not the server's CPU, is what the writers wait for."""
    queue = _queue(engine)
    with queue.lock:
        deepest, queue.deepest = queue.deepest, 0
    return deepest


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
    return _outcome(item)


def run_staged(engine: Engine, work: StagedWork, key: str | None, *, ahead: bool = False) -> Any:
    """`work(connection)`, a generator, run in this process's next group on every database: it
    yields the statements of a stage, receives the rows of each (one round trip for the whole
    group's stage on PostgreSQL), may run other statements between stages on the connection,
    and returns its result. `key` names what it reads and writes (a session id: the module
    docstring); None: work that must run alone (it takes locks out of key order): on SQLite
    after the group's other staged items, on PostgreSQL in a transaction of its own, its stages
    still one round trip each. `ahead`: a model call's row, written before the waiting batches
    (module docstring). As `run` otherwise."""
    item = _Item(work, staged=True, key=key)
    if (key is None or ahead) and engine.dialect.name != "sqlite":
        _write(engine, [item])
    else:
        _grouped(engine, item, ahead)
    return _outcome(item)


def _outcome(item: _Item) -> Any:
    if item.error is not None:
        raise item.error
    return item.result


def _grouped(engine: Engine, item: _Item, ahead: bool = False) -> None:
    """Queue `item` in this process and return once a group holding it is written.

    A thread whose item waits sleeps on a lock of its own, and is woken alone: when its item is
    written, or when it is the first in the queue and no group is being written any more (it
    then leads the next one). A condition's notify_all after each group woke every waiting
    thread, many of them to go back to sleep, each woken a switch to it and a turn at the GIL:
    in a run at 1,000 writers a worker's threads were woken 7,305 times, against 2,417 now
    (docs/benchmarks.md)."""
    queue = _queue(engine)
    with queue.lock:
        (queue.ahead if ahead else queue.waiting).append(item)
        if queue.writing:  # `waiting` holds the event batches; model calls' rows go `ahead`
            queue.deepest = max(queue.deepest, len(queue.waiting))
        try:
            while not item.done:
                if queue.writing:
                    item.waiter = waiter = threading.Lock()
                    waiter.acquire()
                    queue.lock.release()
                    try:
                        waiter.acquire()  # released by `_wake`
                    finally:
                        queue.lock.acquire()
                    continue
                # No group is being written: this thread leads the next one (it holds at most
                # MAX_GROUP items, so a leader whose own item did not fit leads another): the
                # items ahead if any wait, else the others.
                queue.writing = True
                source = queue.ahead or queue.waiting
                group = [source.popleft() for _ in range(min(MAX_GROUP, len(source)))]
                queue.lock.release()
                try:
                    _write(engine, group, leader=True)
                finally:
                    queue.lock.acquire()
                    queue.writing = False
                    for member in group:
                        member.done = True
                        _wake(member)
        except BaseException:  # e.g. KeyboardInterrupt while it waited: nobody waits for it now
            for source in (queue.ahead, queue.waiting):
                if item in source:
                    source.remove(item)  # else it could be woken to lead, and nobody would
            raise
        finally:
            # The next group's leader, unless a thread that came meanwhile leads it already.
            if not queue.writing and (queue.ahead or queue.waiting):
                _wake((queue.ahead or queue.waiting)[0])


def _wake(item: _Item) -> None:
    """Wake `item`'s thread if it sleeps (under its queue's lock)."""
    if item.waiter is not None:
        item.waiter.release()
        item.waiter = None


def _write(engine: Engine, group: list[_Item], leader: bool = False) -> None:
    # `leader`: written by this process's one group leader, who may use the connection the
    # process keeps for it (study.store.transactions.group_connection); the others write side by side.
    try:
        if engine.dialect.name == "postgresql" and all(item.staged for item in group):
            with _postgres_transaction(engine, leader) as (connection, send):
                waves = _waves(group)
                for number, wave in enumerate(waves, 1):
                    _write_staged(connection, wave, send, last_wave=number == len(waves))
            return
        with writing(engine) as connection:
            for item in group:
                if not item.staged:
                    item.result = item.work(connection)
            for wave in _waves(item for item in group if item.staged):
                _write_staged(connection, wave, partial(_send_each, connection), last_wave=False)
    except BaseException as error:  # noqa: BLE001 - nothing of the group is stored; every item says so
        for item in group:
            item.error = error


def _waves(items) -> list[list[_Item]]:
    """Staged items in key order, split so that no key is twice in one wave: a key's second
    item goes in the second wave, which starts once the first has finished. An item without a
    key has a wave of its own, after them."""
    waves: list[list[_Item]] = []
    alone: list[list[_Item]] = []
    seen: dict[str, int] = {}
    for item in sorted(items, key=lambda item: item.key or ""):
        if item.key is None:
            alone.append([item])
            continue
        number = seen[item.key] = seen.get(item.key, -1) + 1
        if number == len(waves):
            waves.append([])
        waves[number].append(item)
    return waves + alone


def _write_staged(connection: Connection, items: list[_Item], send: Send, last_wave: bool) -> None:
    """Run staged items side by side: each stage's statements of every item go in one round.
    A round in which every item sends its `Last` stage, in the group's last wave, may carry the
    transaction's COMMIT (PostgreSQL: `send`'s `last`)."""
    asking: list[tuple[_Item, Generator, Statements]] = []
    for item in items:
        steps = item.work(connection)
        _advance(item, steps, None, asking)
    while asking:
        last = last_wave and all(type(statements) is Last for _, _, statements in asking)
        rows = send([statements for _, _, statements in asking], last)
        current, asking = asking, []
        for (item, steps, _), answer in zip(current, rows, strict=True):
            _advance(item, steps, answer, asking)
        if last and asking:
            raise RuntimeError("a staged work asked for statements after its Last stage")


def _advance(item: _Item, steps: Generator, answer: Rows | None, asking: list) -> None:
    try:
        asking.append((item, steps, steps.send(answer)))
    except StopIteration as finished:
        item.result = finished.value


def _send_each(connection: Connection, rounds: list[Statements], _last: bool) -> list[Rows]:
    """The rows of every statement of `rounds`, sent one after another (SQLite)."""
    return [[driver_fetch(connection, sql, parameters) for sql, parameters in statements] for statements in rounds]


@contextmanager
def _postgres_transaction(engine: Engine, leader: bool) -> Iterator[tuple[Connection, Send]]:
    """A PostgreSQL transaction for staged items, and how it sends a stage: every statement of
    it in one round trip (study.store.pg_rounds), the first led by the transaction's BEGIN.

    psycopg would send the BEGIN in a round trip of its own before a transaction's first
    statement, even in its pipeline mode: one wait for the server of four for each group of
    event batches (strace counts them). (A work that runs a statement of its own before its
    first stage has psycopg begin the transaction, and that stage goes without a BEGIN.)"""
    from psycopg.pq import PipelineStatus  # PostgreSQL's driver: optional

    from study.store import pg_rounds

    with group_connection(engine) if leader else engine.connect() as connection:
        driver = connection.connection.driver_connection

        def send(rounds: list[Statements], last: bool) -> list[Rows]:
            flat = [statement for statements in rounds for statement in statements]
            rows = iter(pg_rounds.send(driver, flat, begin=pg_rounds.idle(driver), commit=last))
            return [[next(rows) for _ in statements] for statements in rounds]

        try:
            yield connection, send
            driver.commit()  # COMMIT, unless the last round carried it
        except BaseException:
            if not driver.closed and driver.pgconn.pipeline_status == PipelineStatus.OFF:
                driver.rollback()
            raise
        finally:
            if driver.closed or driver.pgconn.pipeline_status != PipelineStatus.OFF or not pg_rounds.idle(driver):
                connection.invalidate()  # nothing half-finished goes back to the pool
