"""SQLite's WAL is copied into the database file by a thread of each process
(study.store.checkpoints), not by the writer whose commit took it past 1,000 pages while every
other writer waited for the lock; it is still started again from its beginning while readers
come and go, and a forked worker process checkpoints its own writes."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest
from sqlalchemy import text

from study.store import checkpoints, make_engine, reading, writing

PAGE = 4096


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'study.db'}")
    with writing(engine) as connection:
        connection.execute(text("CREATE TABLE pages (n INTEGER PRIMARY KEY, body BLOB)"))
    yield engine
    engine.dispose()


def _write(engine, first: int, count: int) -> None:
    for n in range(first, first + count):
        with writing(engine) as connection:  # one commit per row, as event batches arrive
            connection.execute(text("INSERT INTO pages VALUES (:n, randomblob(3000))"), {"n": n})


def _rows(engine) -> list[int]:
    with reading(engine) as connection:
        return [n for (n,) in connection.execute(text("SELECT n FROM pages ORDER BY n"))]


def test_the_wal_stays_bounded_while_readers_come_and_go(engine, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoints, "RESTART_PAGES", 200)
    with engine.connect() as connection:
        # A commit copies the WAL itself only far past the thread's own threshold.
        autocheckpoint = connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one()
    assert autocheckpoint == checkpoints.SAFETY_NET_PAGES

    stop = threading.Event()

    def read() -> None:  # page loads, each reading one writer's row: a reader is often in the WAL
        n = 0
        while not stop.wait(0.001):
            with reading(engine) as connection:
                connection.execute(text("SELECT length(body) FROM pages WHERE n = :n"), {"n": n}).scalar()
            n += 7

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    wal = tmp_path / "study.db-wal"
    largest = 0
    try:
        for first in range(0, 6000, 100):
            _write(engine, first, 100)
            largest = max(largest, wal.stat().st_size)
            time.sleep(0.02)  # a launch has pauses; the thread gets its turn between commits
    finally:
        stop.set()
        for reader in readers:
            reader.join()

    assert _rows(engine) == list(range(6000))
    # 6,000 commits wrote about 18,000 pages: copied but never started again, the WAL grows to
    # the writers' safety net (16,100 pages here). Started again at 200 pages, it stayed under
    # 1,200 on a quiet machine and under 1,800 with six busy loops and a disk writer beside it.
    # (Readers that each scan the whole table, as this test's once did, are in the WAL nearly
    # all the time: then it was 3,700-4,300 quiet and up to 11,300 in a loaded CI run.)
    assert largest < 6000 * PAGE, f"the WAL grew to {largest / PAGE:.0f} pages"


def _child_writes(url: str) -> None:
    engine = make_engine(url)
    _write(engine, 10_000, 200)
    engine.dispose()


def test_a_forked_process_writes_and_both_keep_checkpointing(engine, tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    _write(engine, 0, 50)  # this process's thread is running now
    engine.dispose()  # as `study serve` does before forking its workers

    child = multiprocessing.get_context("fork").Process(target=_child_writes, args=(url,))
    child.start()
    _write(engine, 50, 200)  # side by side with the child
    child.join(timeout=60)
    assert child.exitcode == 0, "the forked process did not finish its writes"

    # After the fork this process's thread runs again: its new commits reach the database file
    # without anyone else checkpointing (a commit alone does so only at the safety net).
    database = tmp_path / "study.db"
    before = database.stat().st_size
    _write(engine, 20_000, 300)
    deadline = time.monotonic() + 10
    while database.stat().st_size < before + 300 * 3000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert database.stat().st_size >= before + 300 * 3000
    assert _rows(engine) == list(range(250)) + list(range(10_000, 10_200)) + list(range(20_000, 20_300))
