"""Model calls in flight do not take the threads the writers' event batches need: `study serve`
gives each worker a thread for every model call it may hold ([suggestions]
concurrent_requests) beside its --threads (study.server.serving.model_call_threads)."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from .browser import Browser, start_writing
from .servers import ServerProcess, free_port
from .test_shared_limits import configure

pytestmark = pytest.mark.slow


def test_a_batch_is_stored_while_every_model_call_is_waiting_for_the_model(study_folder, tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    configure(study_folder, endpoint.url, suggestions__concurrent_requests=2,
              suggestions__max_requests_per_minute=10)  # fmt: skip
    port = free_port()
    server = ServerProcess(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
         "--workers", "1", "--threads", "2"],
        port, tmp_path / "serve.log",
    )  # fmt: skip
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            writers = [start_writing(client, f"writer-{i}") for i in range(3)]

        def ask(session_id: str) -> int:
            url = f"{server.url}/api/sessions/{session_id}/suggestions"
            return httpx.post(url, json={"doc": "Once upon a time"}, timeout=60).status_code

        endpoint.hold()  # the model takes its time: both calls wait for it
        with ThreadPoolExecutor(2) as pool:
            asked = [pool.submit(ask, session_id) for session_id in writers[:2]]
            deadline = time.monotonic() + 20
            while endpoint.calls < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert endpoint.calls == 2, server.log_text()

            # The worker's two request threads are the writers' as before: the third writer's
            # batch is stored and acknowledged while both calls still wait for the model.
            with httpx.Client(base_url=server.url, timeout=5) as client:
                browser = Browser(client, writers[2])
                browser.type("Hello")
                assert browser.send(), "the batch was not answered while the model calls waited"
                assert browser.progress() == (set(range(6)), 0)
            assert not any(call.done() for call in asked)

            endpoint.release()
            assert [call.result() for call in asked] == [200, 200]
    finally:
        endpoint.release()
        server.stop()
