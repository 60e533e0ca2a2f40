"""`study status` during a launch: the last minute of every server process (requests, event
batches and how long they took, events stored) and the model calls in flight and refused busy,
summed over two `study serve` processes on one study database (study.server.activity)."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from click.testing import CliRunner
from werkzeug.serving import make_server

from study.cli import main as study_cli
from study.lm.backends import DeterministicBackend
from study.lm.server import create_app as create_model_app

from .browser import Browser, start_writing
from .test_shared_limits import configure, stop_all, two_servers  # noqa: F401 - stop_all is a fixture

pytestmark = pytest.mark.slow


class HeldEndpoint:
    """A model endpoint that answers only once released: a model call stays in flight."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        model = create_model_app(DeterministicBackend())

        def held(environ, start_response):
            self.asked.set()
            self.release.wait(60)
            return model(environ, start_response)

        self.server = make_server("127.0.0.1", 0, held, threaded=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.port}/v1"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()


@pytest.fixture
def held_endpoint():
    endpoint = HeldEndpoint()
    yield endpoint
    endpoint.stop()


def status(folder) -> str:
    result = CliRunner().invoke(study_cli, ["status", str(folder)])
    assert result.exit_code == 0, result.output
    return result.output


def test_status_sums_the_last_minute_of_two_servers_and_shows_model_calls_in_flight(study_folder, tmp_path, held_endpoint, stop_all):  # noqa: F811
    configure(study_folder, held_endpoint.url, suggestions__concurrent_requests=1)
    assert "has not been served yet" in status(study_folder)
    servers = two_servers(study_folder, tmp_path, {"STUDY_ACTIVITY_SECONDS": "0.2"})
    stop_all.append(servers)
    clients = [httpx.Client(base_url=server.url, timeout=30) for server in servers]
    session_id = start_writing(clients[0], "operator-1")
    browser = Browser(clients[0], session_id)
    for batch in range(6):  # one writer's batches, to either server in turn
        browser.client = clients[batch % 2]
        browser.type("abc ")
        assert browser.send()

    ask = f"/api/sessions/{session_id}/suggestions"
    with ThreadPoolExecutor(1) as pool:
        held = pool.submit(clients[0].post, ask, json={"doc": "Once upon a time"})
        assert held_endpoint.asked.wait(30)
        assert clients[1].post(ask, json={"doc": "Once upon a time"}).status_code == 503  # the one slot is taken
        # Each process writes its counts at its interval's end (a request past it, or its
        # timer): ask until both have written everything above, the refusal included (it may
        # sit in a later row than the event batches).
        deadline = time.monotonic() + 60
        while True:
            for client in clients:
                client.get("/healthz")
            output = status(study_folder)
            written = ("2 server processes", "6 event batches", "1 refused busy")
            if all(part in output for part in written) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert "Last minute, 2 server processes:" in output, output
        assert "(6 event batches, 1 asking the model), 25 events stored" in output
        assert re.search(r"event acknowledgements: p50 \d+\.\d ms, p99 \d+\.\d ms in the server", output)
        # One writer's batches, one after the other: none ever waited behind another write.
        assert "database queue: at most 0 event batches waited at once" in output
        assert re.search(r"model calls: 1 in flight of 1 slots, the oldest asked \d+ s ago, 1 refused busy in the last minute", output)
        held_endpoint.release.set()
        assert held.result().status_code == 200
    assert "model calls: none in flight (1 slots)" in status(study_folder)
    for client in clients:
        client.close()



@pytest.mark.parametrize("given", ["300", "lots"])
def test_an_activity_interval_longer_than_the_status_lines_minute_is_refused_at_start(study_folder, monkeypatch, given):
    # A row of five minutes' counts would be summed into "Last minute" whole, or left out whole.
    from study import config
    from study.server import create_app
    from study.server.activity import ActivityConfigError

    monkeypatch.setenv("STUDY_ACTIVITY_SECONDS", given)
    with pytest.raises(ActivityConfigError) as refused:
        create_app(config.load(study_folder))
    assert f"STUDY_ACTIVITY_SECONDS='{given}'" in str(refused.value) and "0.1 to 60" in str(refused.value)
