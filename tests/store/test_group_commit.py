"""study.store.group_commit: batches that arrive together share one transaction, and each is
still answered for itself: stored and acknowledged, refused alone, or (when the transaction
fails) not stored and told so. A batch queued behind its own session's previous one is checked
against what that one stored. On PostgreSQL other writes have their own transaction, and none
waits for another writer's. A model call's row goes ahead of the batches waiting."""

from __future__ import annotations

import ctypes
import functools
import threading
import time

import pytest
from sqlalchemy import text

from study.server import arrival
from study.server.limits import Limits
from study.store import events as event_store
from study.store import engine as store_engine
from study.store import group_commit
from study.store.transactions import keep_write_connection

from .records import event_count
from .test_events import new_session, typed_batches


# A plain `run` is grouped on SQLite only (study.store.group_commit's docstring).
sqlite_only = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def _hold_the_writer(engine, staged: bool = False):
    """A group in progress that ends when the returned event is set, so that what is submitted
    meanwhile waits and goes in together as the next group. `staged`: a staged group
    (study.store.group_commit.run_staged), which event batches queue behind on every database
    (on PostgreSQL a plain `run` writes alone)."""
    entered, release = threading.Event(), threading.Event()

    def slow(connection):
        entered.set()
        release.wait(10)
        return "slow"

    def slow_in_stages(connection):
        slow(connection)
        yield [("SELECT 1", ())]
        return "slow"

    if staged:
        holder = threading.Thread(target=group_commit.run_staged, args=(engine, slow_in_stages, "holder"))
    else:
        holder = threading.Thread(target=group_commit.run, args=(engine, slow))
    holder.start()
    assert entered.wait(10)
    return holder, release


def _submit(target, *args) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def call():
        try:
            outcome["result"] = target(*args)
        except Exception as error:  # noqa: BLE001 - the test looks at what each caller was told
            outcome["error"] = error

    thread = threading.Thread(target=call)
    thread.start()
    return thread, outcome


def _wait_until_queued(engine, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(group_commit._queue(engine).waiting) < count:
        assert time.monotonic() < deadline, "the batches never reached the queue"
        time.sleep(0.01)


def test_many_writers_at_once_have_every_batch_stored_once_and_acknowledged(engine):
    sessions = [new_session(engine) for _ in range(12)]
    answers: dict[str, list[int]] = {session_id: [] for session_id in sessions}

    def writer(session_id):
        _, batches = typed_batches("Words arrive together from many writers.", size=4)
        for batch in batches:
            answers[session_id] += event_store.ingest(engine, session_id, batch).acked

    threads = [threading.Thread(target=writer, args=(session_id,)) for session_id in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for session_id in sessions:
        assert event_count(engine, session_id) == len(answers[session_id]) > 0
        assert answers[session_id] == list(range(len(answers[session_id])))


def test_the_deepest_queue_is_the_most_batches_that_waited_at_once_behind_a_write(engine):
    sessions = [new_session(engine) for _ in range(5)]
    _, (batch, *_) = typed_batches("Queued behind a slow write.", size=10)
    event_store.ingest(engine, new_session(engine), batch)  # alone: it waits behind nothing
    assert group_commit.deepest_waiting(engine) == 0

    holder, release = _hold_the_writer(engine, staged=True)
    submitted = [_submit(event_store.ingest, engine, session_id, batch) for session_id in sessions]
    _wait_until_queued(engine, len(sessions))
    release.set()
    holder.join(10)
    for thread, _ in submitted:
        thread.join(20)

    assert all(outcome["result"].stored == len(batch) for _, outcome in submitted)
    assert group_commit.deepest_waiting(engine) == len(sessions)
    assert group_commit.deepest_waiting(engine) == 0  # asked, it counts again from nothing


@sqlite_only
def test_a_refused_batch_is_refused_alone_and_its_group_is_stored(engine):
    good, bad = new_session(engine), new_session(engine)
    _, (good_batch, *_) = typed_batches("Kept", size=10)
    _, (bad_batch, *_) = typed_batches("Refused", size=10)

    def refuse(connection, rows, stored):
        raise event_store.Refused("events[0]: not this one")

    holder, release = _hold_the_writer(engine)
    refused, refused_outcome = _submit(event_store.ingest, engine, bad, bad_batch, refuse)
    kept, kept_outcome = _submit(event_store.ingest, engine, good, good_batch, lambda connection, rows, stored: None)
    _wait_until_queued(engine, 2)
    release.set()
    for thread in (holder, refused, kept):
        thread.join(10)

    assert isinstance(refused_outcome["error"], event_store.Refused)
    assert event_count(engine, bad) == 0
    assert kept_outcome["result"].stored == len(good_batch)
    assert event_count(engine, good) == len(good_batch)


@sqlite_only
def test_a_failed_transaction_stores_nothing_of_its_group_and_tells_every_writer(engine):
    session_id = new_session(engine)
    _, (batch, *_) = typed_batches("Lost together", size=20)

    def broken(connection):
        connection.execute(text("INSERT INTO no_such_table VALUES (1)"))

    holder, release = _hold_the_writer(engine)
    writer, outcome = _submit(event_store.ingest, engine, session_id, batch)
    failing, failing_outcome = _submit(group_commit.run, engine, broken)
    _wait_until_queued(engine, 2)
    release.set()
    for thread in (holder, writer, failing):
        thread.join(10)

    assert "error" in failing_outcome
    assert "error" in outcome, "a batch must not be acknowledged when its transaction failed"
    assert event_count(engine, session_id) == 0
    # The browser's resend is stored as usual.
    assert event_store.ingest(engine, session_id, batch).stored == len(batch)


@sqlite_only
@pytest.mark.parametrize("size", [group_commit.MAX_GROUP + 5])
def test_a_queue_longer_than_one_group_is_written_in_several(engine, size):
    sessions = [new_session(engine) for _ in range(size)]
    _, (batch, *_) = typed_batches("One", size=10)

    holder, release = _hold_the_writer(engine)
    submitted = [_submit(event_store.ingest, engine, session_id, batch) for session_id in sessions]
    _wait_until_queued(engine, size)
    release.set()
    holder.join(10)
    for thread, _ in submitted:
        thread.join(20)

    assert all(outcome["result"].stored == len(batch) for _, outcome in submitted)
    assert all(event_count(engine, session_id) == len(batch) for session_id in sessions)


@sqlite_only
def test_a_writer_interrupted_while_it_waits_does_not_hold_up_the_batches_behind_it(engine):
    """A waiting thread is woken alone to lead the next group (study.store.group_commit._grouped);
    one stopped by an exception while it waited (KeyboardInterrupt, raised here as Python raises
    it, once the thread runs again) must not take that lead away with it."""
    sessions = [new_session(engine) for _ in range(2)]
    _, (batch, *_) = typed_batches("One", size=10)
    holder, release = _hold_the_writer(engine)
    stopped: list[BaseException] = []

    def interrupted_writer():
        try:
            event_store.ingest(engine, sessions[0], batch)
        except KeyboardInterrupt as stop:
            stopped.append(stop)

    first = threading.Thread(target=interrupted_writer)
    first.start()
    _wait_until_queued(engine, 1)
    second, second_outcome = _submit(event_store.ingest, engine, sessions[1], batch)
    _wait_until_queued(engine, 2)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(first.ident), ctypes.py_object(KeyboardInterrupt))
    release.set()
    holder.join(10)
    first.join(10)
    second.join(10)

    assert not second.is_alive() and second_outcome["result"].stored == len(batch)
    assert event_count(engine, sessions[1]) == len(batch)
    assert stopped and event_count(engine, sessions[0]) == 0


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_on_postgresql_a_batch_does_not_wait_for_another_writers_transaction(engine):
    mine, theirs = new_session(engine), new_session(engine)
    _, (batch, *_) = typed_batches("Side by side", size=20)
    holder, release = _hold_the_writer(engine)  # another writer's transaction, still open
    try:
        writer, outcome = _submit(event_store.ingest, engine, mine, batch)
        writer.join(10)
        assert outcome["result"].stored == len(batch)
        assert event_count(engine, mine) == len(batch)
    finally:
        release.set()
        holder.join(10)
    assert event_store.ingest(engine, theirs, batch).stored == len(batch)


def test_a_batch_queued_with_its_sessions_previous_one_is_checked_against_it(engine):
    """A browser's next batch (or its resend) can share a group with the one before: it must
    see that one's events stored, as it would in a group of its own."""
    session_id = new_session(engine)
    _, (first, second, *_) = typed_batches("Two batches of one writer", size=8)
    holder, release = _hold_the_writer(engine, staged=True)
    earlier, earlier_outcome = _submit(
        event_store.ingest, engine, session_id, first, arrival.checker(session_id, first, Limits()).check
    )
    _wait_until_queued(engine, 1)
    later, later_outcome = _submit(
        event_store.ingest, engine, session_id, second, arrival.checker(session_id, second, Limits()).check
    )
    _wait_until_queued(engine, 2)
    release.set()
    for thread in (holder, earlier, later):
        thread.join(10)

    # Checked against nothing stored, the later batch would not replay (no initialize event).
    assert earlier_outcome["result"].stored == len(first)
    assert later_outcome["result"].stored == len(second)
    assert event_count(engine, session_id) == len(first) + len(second)


def _noting(order: list[str], name: str):
    def work(connection):
        order.append(name)
        yield [("SELECT 1", ())]
        return name

    return work


def _wait_until_ahead(engine, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(group_commit._queue(engine).ahead) < count:
        assert time.monotonic() < deadline, "the model call's row never reached the queue"
        time.sleep(0.01)


@sqlite_only
def test_a_model_calls_row_is_written_before_the_batches_that_were_waiting(engine):
    """A participant waits on a model call's row (the suggestion is on hold until it is
    written); a batch's browser only waits for an acknowledgement. Queued behind a group in
    progress, the row goes first, in a group of its own, and the batches follow."""
    order: list[str] = []
    holder, release = _hold_the_writer(engine, staged=True)
    batches = [_submit(group_commit.run_staged, engine, _noting(order, f"batch {i}"), f"session {i}") for i in range(3)]
    _wait_until_queued(engine, 3)
    ahead = functools.partial(group_commit.run_staged, ahead=True)
    call, call_outcome = _submit(ahead, engine, _noting(order, "model call"), None)
    _wait_until_ahead(engine, 1)
    release.set()
    for thread, _ in [(holder, None), *batches, (call, None)]:
        thread.join(10)

    assert order == ["model call", "batch 0", "batch 1", "batch 2"]
    assert call_outcome["result"] == "model call"
    assert [outcome["result"] for _, outcome in batches] == ["batch 0", "batch 1", "batch 2"]


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_on_postgresql_a_model_calls_row_does_not_wait_for_a_group_in_progress(engine):
    order: list[str] = []
    holder, release = _hold_the_writer(engine, staged=True)
    try:
        ahead = functools.partial(group_commit.run_staged, ahead=True)
        call, outcome = _submit(ahead, engine, _noting(order, "model call"), "a row")
        call.join(10)
        assert outcome["result"] == "model call"
    finally:
        release.set()
        holder.join(10)


# A served worker's group writer on PostgreSQL (study.store.transactions.keep_write_connection).

postgresql_only = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


def _backend_of_a_group(engine) -> int:
    def work(_connection):
        (((pid,),),) = yield [("SELECT pg_backend_pid()", ())]  # one statement, one row
        return pid

    return group_commit.run_staged(engine, work, key="a session")


def _kept_then_dropped_by_the_database(engine) -> int:
    """The backend of the group writer's kept connection, which the database has just ended."""
    keep_write_connection(engine)
    gone = _backend_of_a_group(engine)
    with engine.connect() as admin:
        admin.exec_driver_sql(f"SELECT pg_terminate_backend({gone})")
        admin.commit()
    return gone


def _connections_to(engine) -> int:
    """Connections to the test's database, this one's own left out."""
    with engine.connect() as connection:
        return connection.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).scalar_one()


@pytest.mark.postgres
@postgresql_only
def test_a_served_workers_groups_are_written_on_the_connection_it_keeps(engine):
    keep_write_connection(engine)
    first = _backend_of_a_group(engine)
    with engine.connect() as other:  # the pool's next connection is not the group writer's
        assert other.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() != first
    assert _backend_of_a_group(engine) == first


@pytest.mark.postgres
@postgresql_only
def test_a_kept_connection_the_database_dropped_during_a_quiet_spell_costs_no_batch(engine, monkeypatch):
    gone = _kept_then_dropped_by_the_database(engine)
    monkeypatch.setattr(store_engine, "IDLE_PING_SECONDS", 0)  # as if the launch had paused since
    replacement = _backend_of_a_group(engine)  # pinged, found gone, replaced: no error
    assert replacement != gone
    assert _backend_of_a_group(engine) == replacement


@pytest.mark.postgres
@postgresql_only
def test_after_a_failed_group_the_next_is_written_on_a_new_connection(engine):
    import psycopg

    gone = _kept_then_dropped_by_the_database(engine)
    with pytest.raises(psycopg.OperationalError):  # not idle long enough to be pinged: it fails whole
        _backend_of_a_group(engine)
    assert _backend_of_a_group(engine) != gone


@pytest.mark.postgres
@postgresql_only
def test_dispose_closes_the_group_writers_kept_connection(engine):
    keep_write_connection(engine)
    _backend_of_a_group(engine)
    engine.dispose()
    assert _connections_to(engine) == 0
