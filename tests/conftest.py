"""Fixtures shared by the whole suite: a fresh study folder and its app."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pytest

from study import config
from study import config_texts
from study.cli import write_study_files
from tests import threads_left

SHARED = Path(__file__).resolve().parents[2] / "shared"
COAUTHOR = SHARED / "data" / "coauthor"
# `study serve` refuses a consent page without a real contact (study.config_texts.unfinished_consent).
CONTACT = {config_texts.CONSENT_CONTACT_PLACEHOLDER: "Dr. Ada Test, Department of Testing, Example University"}


@pytest.fixture(autouse=True)
def _no_timer_outlives_its_test():
    """The toolkit's timers a test armed end with it (tests/threads_left.py)."""
    before = set(threading.enumerate())
    yield
    threads_left.cancel_timers(before)


@pytest.fixture(scope="session", autouse=True)
def _no_server_outlives_the_run():
    """At the end of each worker, after the session's own fixtures, a warning naming the servers
    and threads of our own still running (tests/threads_left.py)."""
    before = set(threading.enumerate())
    yield
    left = threads_left.still_running(before)
    if left:
        warnings.warn(
            "threads a test started are still running at the end of the run (stop them in the "
            f"fixture or helper that started them): {', '.join(left)}",
            pytest.PytestWarning,
            stacklevel=1,
        )


@pytest.fixture
def study_folder(tmp_path: Path) -> Path:
    """A study made by `study init`, with a short minimum time."""
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    return folder


@pytest.fixture
def study(study_folder: Path) -> config.Study:
    return config.load(study_folder)


@pytest.fixture
def app(study):
    from study.server import create_app

    # These tests never ask for suggestions; tests/suggest and tests/browser drive a real model.
    return create_app(study, suggestion_engine=object())


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright, one for the whole run (the sync API allows one
    instance per thread: tests/browser and tests/report share it)."""
    from playwright import sync_api

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def model_url():
    """Base URL (".../v1") of our own OpenAI-compatible endpoint (`study lm serve`) with the
    deterministic model: the suggestions, chat replies and ghost text of every test that does
    not break the model on purpose."""
    from study.lm.backends import DeterministicBackend
    from study.lm.server import serve_in_thread

    base_url, stop = serve_in_thread(DeterministicBackend())
    yield base_url
    stop()


@pytest.fixture(scope="session")
def smollm2_backend():
    """SmolLM2-135M on the CPU, loaded once for the whole run (15-25 s a load): the model's
    own tests and the chat demo's browser test read the same weights. Callers skip first when
    the `lm` extra is missing (study.lm.smollm2.available)."""
    from study.lm.smollm2 import SmolLM2Backend

    return SmolLM2Backend()


@pytest.fixture
def endpoint_factory():
    """Model endpoints that count the calls they answer (tests/server/counting_endpoint.py)."""
    from tests.server.counting_endpoint import CountingEndpoint

    made = []

    def make(**options) -> CountingEndpoint:
        made.append(CountingEndpoint(**options))
        return made[-1]

    yield make
    for endpoint in made:
        endpoint.stop()


@pytest.fixture
def redis_url(tmp_path_factory):
    """A redis-server of our own on a free port (as tests/store starts its own PostgreSQL);
    skipped where redis-server is not installed (CI installs it with apt)."""
    import shutil
    import socket
    import subprocess
    import time

    server = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if server is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
                connection.sendall(b"PING\r\n")
                if connection.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            pytest.fail(f"redis-server did not start on port {port}")
        time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(timeout=10)
