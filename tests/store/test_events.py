"""study.store.events: every event stored exactly once, in seq order, whatever the browser resends,
on SQLite and on PostgreSQL."""

from __future__ import annotations

import random
import threading

import orjson
from sqlalchemy import select

from study.curation.replay import replay
from study.store import events as event_store
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.db import events

from .records import Editor, event_count


def new_session(engine) -> str:
    with writing(engine) as connection:
        return session_store.create(connection, access_code="lab-1")["session_id"]


def typed_batches(text: str, size: int) -> tuple[Editor, list[list[dict]]]:
    editor = Editor()
    records = [editor.initialize(), *editor.type(text)]
    return editor, [records[i : i + size] for i in range(0, len(records), size)]


def test_a_batch_is_stored_and_acknowledged(engine):
    session_id = new_session(engine)
    _, (batch, *_) = typed_batches("Hello", size=10)

    result = event_store.ingest(engine, session_id, batch)

    assert result.acked == [0, 1, 2, 3, 4, 5]
    assert event_count(engine, session_id) == 6


def test_resending_a_batch_stores_nothing_twice_and_acks_the_same_seqs(engine):
    session_id = new_session(engine)
    _, (batch, *_) = typed_batches("Hello", size=10)
    first = event_store.ingest(engine, session_id, batch)

    again = event_store.ingest(engine, session_id, batch)

    assert again.acked == first.acked
    assert event_count(engine, session_id) == 6


def test_a_resend_overlapping_stored_events_stores_only_the_new_ones(engine):
    session_id = new_session(engine)
    _, batches = typed_batches("Hello world", size=4)
    event_store.ingest(engine, session_id, batches[0])

    # The browser lost the first acknowledgement and now sends both batches together.
    result = event_store.ingest(engine, session_id, batches[0] + batches[1])

    assert result.acked == list(range(8))
    with reading(engine) as connection:
        assert event_store.stored_seqs(connection, session_id) == list(range(8))


def test_the_answer_counts_new_events_and_duplicates(engine):
    session_id = new_session(engine)
    _, batches = typed_batches("Hello world", size=4)

    first = event_store.ingest(engine, session_id, batches[0])
    overlapping = event_store.ingest(engine, session_id, batches[0] + batches[1])
    again = event_store.ingest(engine, session_id, batches[1])

    assert (first.stored, first.duplicates) == (4, 0)
    assert (overlapping.stored, overlapping.duplicates) == (4, 4)
    assert (again.stored, again.duplicates) == (0, 4)


def test_the_first_copy_of_an_event_wins(engine):
    session_id = new_session(engine)
    _, (batch, *_) = typed_batches("Hi", size=10)
    event_store.ingest(engine, session_id, batch)
    altered = [{**batch[1], "eventName": "cursor-forward", "textDelta": ""}]

    event_store.ingest(engine, session_id, altered)

    with reading(engine) as connection:
        assert event_store.records(connection, session_id)[1]["eventName"] == "text-insert"


def test_records_come_back_in_seq_order_whatever_the_arrival_order(engine):
    session_id = new_session(engine)
    editor, batches = typed_batches("The quick brown fox jumps over the lazy dog.", size=3)
    random.Random(7).shuffle(batches)

    for batch in batches:
        event_store.ingest(engine, session_id, list(reversed(batch)))

    with reading(engine) as connection:
        records = event_store.records(connection, session_id)
        seqs = event_store.stored_seqs(connection, session_id)
    assert seqs == list(range(editor.seq))
    assert [r["eventTimestamp"] for r in records] == sorted(r["eventTimestamp"] for r in records)
    assert "seq" not in records[0]
    assert replay(records).text == editor.doc


def test_missing_seqs_names_the_events_not_yet_stored(engine):
    session_id = new_session(engine)
    _, batches = typed_batches("abcdefghij", size=2)  # seqs 0..10 in batches of two
    for batch in batches[:1] + batches[2:4]:
        event_store.ingest(engine, session_id, batch)

    with reading(engine) as connection:
        assert event_store.missing_seqs(connection, session_id, 10) == [2, 3, 8, 9, 10]
        assert event_store.missing_seqs(connection, session_id, 1) == []
        assert event_store.missing_seqs(connection, "0" * 32, 2) == [0, 1, 2]


def run_threads(targets) -> None:
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # noqa: BLE001 - re-raised in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "an ingest thread hung"
    if errors:
        raise errors[0]


def test_concurrent_writers_each_get_all_their_events_stored(engine):
    writers = 16
    session_ids = [new_session(engine) for _ in range(writers)]
    plans = {session_id: typed_batches("concurrent typing " * 3, size=5) for session_id in session_ids}

    def write(session_id):
        for batch in plans[session_id][1]:
            result = event_store.ingest(engine, session_id, batch)
            assert result.acked == [item["seq"] for item in batch]

    run_threads([lambda s=s: write(s) for s in session_ids])

    for session_id, (editor, _) in plans.items():
        with reading(engine) as connection:
            assert event_store.stored_seqs(connection, session_id) == list(range(editor.seq))
            assert replay(event_store.records(connection, session_id)).text == editor.doc
    assert event_count(engine) == sum(editor.seq for editor, _ in plans.values())


def test_concurrent_resends_into_one_session_store_each_event_once(engine):
    # Several tabs or retries racing: every thread sends every batch, in its own order.
    session_id = new_session(engine)
    editor, batches = typed_batches("one session, many senders", size=4)

    def send(order_seed):
        for batch in random.Random(order_seed).sample(batches, len(batches)):
            result = event_store.ingest(engine, session_id, batch)
            assert result.acked == sorted(item["seq"] for item in batch)

    run_threads([lambda seed=seed: send(seed) for seed in range(8)])

    with reading(engine) as connection:
        assert event_store.stored_seqs(connection, session_id) == list(range(editor.seq))
        assert replay(event_store.records(connection, session_id)).text == editor.doc


def test_a_new_sqlite_database_and_its_wal_are_private_to_their_owner(tmp_path):
    import os
    import stat

    from study.store import create_tables, make_engine, writing
    from study.store import sessions as session_store

    previous = os.umask(0o022)  # the usual umask, which would make files world-readable
    try:
        engine = make_engine(f"sqlite:///{tmp_path / 'study.db'}")
        create_tables(engine)
        with writing(engine) as connection:
            session_store.create(connection, worker_id="A1PRIVATE")
        files = sorted(tmp_path.glob("study.db*"))
        modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}
        engine.dispose()
    finally:
        os.umask(previous)
    assert {"study.db", "study.db-wal", "study.db-shm"} <= set(modes)
    assert set(modes.values()) == {0o600}, {name: oct(mode) for name, mode in modes.items()}


def test_every_character_a_writer_types_is_stored_exactly(engine):
    # Quotes, backslashes, a line separator, a control character and an emoji: each record is
    # stored as the very JSON text it was sent as, on every database.
    session_id = new_session(engine)
    _, batches = typed_batches('She said "no\\\\ way" \u2028 \x01 \U0001F600 — café', size=50)
    for batch in batches:
        event_store.ingest(engine, session_id, batch)
    sent = [orjson.dumps({k: v for k, v in item.items() if k != "seq"}).decode() for batch in batches for item in batch]

    with reading(engine) as connection:
        stored = connection.execute(
            select(events.c.record).where(events.c.session_id == session_id).order_by(events.c.seq)
        ).scalars().all()
    assert stored == sent
