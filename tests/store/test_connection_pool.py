"""A busy server process keeps its PostgreSQL connections: every request thread can hold one at
once, and none is closed when it comes back, so no request waits for PostgreSQL to start a new
server process for it (at a 1,000-writer launch that churn took most of a core and held the
acknowledgements at p99 0.9-1.7 s; README, "Benchmarks")."""

from __future__ import annotations

import threading

import pytest

from study.store import make_engine
from study.store.engine import driver_read

pytestmark = pytest.mark.postgres

THREADS = 12


def test_every_request_thread_keeps_its_connection(postgres_url):
    engine = make_engine(postgres_url, threads=THREADS)
    backends: set[int] = set()
    together = threading.Barrier(THREADS)

    def requests() -> None:
        for _ in range(20):
            # Every thread reads at once, as a burst of event batches does (each reads its
            # session), then all wait without a connection (as they wait for their group).
            together.wait()
            ((pid, _),) = driver_read(engine, "SELECT pg_backend_pid(), pg_sleep(0.005)", ())
            backends.add(pid)

    try:
        threads = [threading.Thread(target=requests) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        engine.dispose()
    # One connection per thread at most (and the pool's two to spare), each used all along;
    # a pool smaller than the threads opened one for nearly every read past its size.
    assert THREADS / 2 <= len(backends) <= THREADS + 2
