"""Requests that reach the database at the same moment, on PostgreSQL, whose writers run side by
side (on SQLite every `writing` transaction takes the write lock up front, so they take turns).

`at_once` runs calls in threads and holds each one just before its first statement that starts
with `before` (say "INSERT INTO review_ratings"), until every call has got there, has finished,
or one of them is waiting for a lock in PostgreSQL (it then takes its turn, and the others go
on). So two calls that both read, then write, both read before either writes; calls that
already take turns are not held up. No call is timed: the hold ends on what the others did.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import event

from tests.store.locks import someone_waits_for_a_lock

HOLD_LIMIT = 30.0  # a stuck call fails the test rather than hang it


def at_once(engine, before: str, *calls: Callable[[], object]) -> list[object]:
    """The calls' results (or the exceptions they raised), in order."""
    state = threading.Condition()
    arrived: set[int] = set()
    finished: set[int] = set()
    mine = threading.local()

    def hold(conn, cursor, statement, parameters, context, executemany):
        index = getattr(mine, "index", None)
        if index is None or index in arrived or not statement.lstrip().startswith(before):
            return
        with state:
            arrived.add(index)
            state.notify_all()
        deadline = HOLD_LIMIT
        with state:
            while len(arrived | finished) < len(calls) and deadline > 0:
                state.wait(0.02)
                deadline -= 0.02
                if someone_waits_for_a_lock(engine):
                    return

    def run(index: int, call: Callable[[], object]) -> None:
        mine.index = index
        try:
            results[index] = call()
        except BaseException as error:  # the test reads it
            results[index] = error
        finally:
            with state:
                finished.add(index)
                state.notify_all()

    results: list[object] = [None] * len(calls)
    event.listen(engine, "before_cursor_execute", hold)
    try:
        threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HOLD_LIMIT * 2)
    finally:
        event.remove(engine, "before_cursor_execute", hold)
    return results
