"""Every request thread of a server process can hold a database connection at once, so none
waits for one. On PostgreSQL none is closed when it comes back either, so no request waits for
PostgreSQL to start a new server process for it (at a 1,000-writer launch that churn took most
of a core and held the acknowledgements at p99 0.9-1.7 s; docs/benchmarks.md)."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import pytest
from click.testing import CliRunner

from study.cli import main as study_cli
from study.server import serving
from study.store import make_engine
from study.store.driver import driver_read
from tests.scale.servers import free_port

THREADS = 12


def _hold_at_once(engine, count: int) -> bool:
    """Whether `count` threads' connections can be held together without waiting: a thread past
    the pool's limit waits for one to come back (up to 30 s)."""
    with ExitStack() as held:
        for _ in range(count - 1):
            held.enter_context(engine.connect())
        last = threading.Thread(target=lambda: engine.connect().close(), daemon=True)
        last.start()
        last.join(5)
        return not last.is_alive()


def test_a_process_with_many_threads_never_waits_for_an_sqlite_connection(study):
    engine = make_engine(study.database_url, threads=40)
    try:
        assert _hold_at_once(engine, 40)
    finally:
        engine.dispose()


def test_study_serve_has_a_connection_for_every_thread_of_a_worker(study_folder, monkeypatch):
    # 4 request threads and 30 model calls at once: a worker runs 34 threads (serving.run).
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace("[suggestions]\n", "[suggestions]\nconcurrent_requests = 30\n", 1))
    served = {}
    monkeypatch.setattr(serving, "run", lambda app, **options: served.update(app=app, **options))
    # A free port: `study serve` checks its address before it starts the server (5000 may be
    # another program's, e.g. a demo someone left running).
    port = str(free_port())
    result = CliRunner().invoke(study_cli, ["serve", str(study_folder), "--threads", "4", "--workers", "1", "--port", port])
    assert result.exit_code == 0, result.output
    assert "1 worker processes x 4 threads (and 30 for model calls)" in result.output
    engine = served["app"].extensions["study.engine"]
    try:
        assert _hold_at_once(engine, 34)
    finally:
        engine.dispose()


@pytest.mark.postgres
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
