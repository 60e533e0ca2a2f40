"""A server worker killed with SIGKILL while the model is being asked (the out-of-memory killer,
an operator's kill -9) does not hold the study's model-call slot for the time window (2 x
timeout + 10 s): the worker the master starts in its place (`study serve`'s granian, or gunicorn
with or without the shipped config, study.server.gunicorn_config) settles the dead one's call as
stopped, and the next suggestion is admitted at once (study.server.worker_start)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from study import config
from study.server.model_calls import SERVER_STOPPED, in_flight_seconds
from study.store import make_engine, reading
from study.store.db import suggestion_requests

from .browser import start_writing
from .servers import ServerProcess, free_port
from .test_shared_limits import configure, database_keys

pytestmark = pytest.mark.slow


def _workers(master_pid: int) -> set[int]:
    """The processes the server's master forked (its worker; Linux's /proc)."""
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    return {int(pid) for pid in children}


def _wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
    return found


def _server(kind: str, study_folder: Path, tmp_path: Path) -> ServerProcess:
    """One worker under its master: `study serve` (granian), or gunicorn with --preload (the app
    is built once in the master, so a worker started again does not build it), as the README's
    recipe runs it with the shipped config ("gunicorn") or as a tutorial runs an app, without
    ("gunicorn-plain")."""
    port = free_port()
    if kind == "serve":
        command = [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port), "--workers", "1"]
        return ServerProcess(command, port, tmp_path / "server.log")
    config = ["-c", "python:study.server.gunicorn_config"] if kind == "gunicorn" else []
    command = [sys.executable, "-m", "gunicorn", *config, "--preload",
               "-w", "1", "--threads", "4", "-b", f"127.0.0.1:{port}", "study.server.wsgi:app"]  # fmt: skip
    return ServerProcess(command, port, tmp_path / "server.log",
                         env={"STUDY_DIR": str(study_folder), "STUDY_SECRET_KEY": "test-key"})  # fmt: skip


@pytest.mark.parametrize(("kind", "database"), [
    ("serve", "sqlite"),
    pytest.param("serve", "postgresql", marks=pytest.mark.postgres),
    ("gunicorn", "sqlite"),
    ("gunicorn-plain", "sqlite"),
    pytest.param("gunicorn-plain", "postgresql", marks=pytest.mark.postgres),
])
def test_a_worker_killed_mid_call_frees_the_study_s_model_call_slot_at_once(study_folder, tmp_path, endpoint_factory, kind, database, request):
    endpoint = endpoint_factory()
    endpoint.hold()  # the model hangs: the worker is killed while it waits for the answer
    configure(study_folder, endpoint.url, suggestions__concurrent_requests=1, **database_keys(database, request))
    study = config.load(study_folder)
    server = _server(kind, study_folder, tmp_path)
    server.start(timeout=60)
    try:
        client = httpx.Client(base_url=server.url, timeout=60)
        session_id = start_writing(client, "writer-1")
        asked = []
        first = threading.Thread(target=lambda: asked.append(_ask(server, session_id)))
        first.start()
        _wait_for(lambda: endpoint.calls == 1, 30, "the model to be asked")
        (worker,) = _workers(server.process.pid)
        os.kill(worker, signal.SIGKILL)
        killed_at = time.monotonic()
        first.join(timeout=30)
        assert asked == [None], "the killed worker's request got no answer"
        endpoint.release()

        # The master starts a worker in the dead one's place.
        _wait_for(lambda: _workers(server.process.pid) - {worker}, 30, "a new worker")
        _wait_for(lambda: _healthy(server), 30, "the new worker to answer")
        # The new worker settled the dead one's call as it started, before any request.
        assert _outcomes(study) == [SERVER_STOPPED]
        status = _ask(server, session_id)
        waited = time.monotonic() - killed_at
    finally:
        server.stop()

    # Before, the dead call's row took the only slot until its window passed: 503 meanwhile.
    assert status == 200
    assert waited < in_flight_seconds(study)
    assert endpoint.calls == 2
    assert _outcomes(study) == [SERVER_STOPPED, None]
    assert "settled" in server.log_text()


def _outcomes(study) -> list[str | None]:
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        query = select(suggestion_requests.c.error).order_by(suggestion_requests.c.id)
        outcomes = connection.execute(query).scalars().all()
    engine.dispose()
    return outcomes


def _ask(server: ServerProcess, session_id: str) -> int | None:
    """The suggestion request's status; None when the connection died without an answer."""
    try:
        return httpx.post(f"{server.url}/api/sessions/{session_id}/suggestions",
                          json={"doc": "Once upon a time"}, timeout=60).status_code  # fmt: skip
    except httpx.TransportError:
        return None


def _healthy(server: ServerProcess) -> bool:
    try:
        return httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
