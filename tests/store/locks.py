"""Two transactions at once on PostgreSQL, for the tests of what must take turns: one is held
until the other has either finished or is waiting for a lock (the turn it must take), never
for a measured time."""

from __future__ import annotations

import threading


def someone_waits_for_a_lock(engine) -> bool:
    """Whether a connection to `engine`'s database is waiting for a lock."""
    with engine.connect() as connection:
        return bool(connection.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database()").scalar())  # fmt: skip


def until_done_or_waiting(thread: threading.Thread, engine) -> None:
    """Return once `thread` has finished or waits for a lock in `engine`'s database."""
    for _ in range(2000):  # a bound for a stuck run, not a measured time
        if not thread.is_alive() or someone_waits_for_a_lock(engine):
            return
        thread.join(0.01)


def second_inside_first(engine, first, second):
    """`first(connection)` in a write transaction, then, before it commits, `second(connection)`
    in another thread's own, held until that one finishes or waits for a lock; returns both
    results once both have committed."""
    from study.store import writing

    answers: dict = {}

    def run_second() -> None:
        with writing(engine) as own:
            answers["second"] = second(own)

    with writing(engine) as connection:
        answers["first"] = first(connection)
        thread = threading.Thread(target=run_second)
        thread.start()
        until_done_or_waiting(thread, engine)
    thread.join()
    return answers["first"], answers["second"]
