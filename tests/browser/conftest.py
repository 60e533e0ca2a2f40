"""Fixtures for the browser tests: the real task server, a local model, Debian's Chromium.

The task server runs either in a thread of this process (`task_server`) or, for tests that
kill it, as a `study serve` subprocess (`TaskServerProcess`). Suggestions come from our own
model endpoint with the deterministic backend, so no network and no weights are needed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from study import config
from study.cli import write_study_files
from tests.conftest import CONTACT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip
MIN_SECONDS = 3

if not Path(CHROMIUM).exists():  # pragma: no cover - Debian's chromium package is a test need
    pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url: str, timeout: float = 60.0) -> None:
    # Generous: `study serve` imports the whole server in every worker, which on a loaded
    # 2-core machine (CI, or tests in parallel) has taken more than 15 s.
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# -- the study and its model (`model_url` is in tests/conftest.py) ---------------------------


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "study"
    write_study_files(
        folder, replacements={"min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT}
    )
    return folder


@dataclass
class TaskServer:
    url: str
    study: config.Study


def _serve_in_thread(study: config.Study):
    from werkzeug.serving import make_server

    from study.server import create_app

    server = make_server("127.0.0.1", free_port(), create_app(study), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def model(endpoint_factory):
    """A model endpoint that counts the calls it answers (tests/server/counting_endpoint.py); a
    module whose writers use it serves it with `def endpoint(model): return model.url`."""
    return endpoint_factory()


@pytest.fixture
def endpoint(model_url) -> str:
    """The model endpoint the task server asks; override it to simulate a broken model."""
    return model_url


@pytest.fixture
def task_server(study_dir: Path, endpoint: str):
    study = config.load(study_dir)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=endpoint))
    server, thread = _serve_in_thread(study)
    yield TaskServer(url=f"http://127.0.0.1:{server.port}", study=study)
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def task_server_factory(endpoint: str):
    """The task server in a thread for a study the test has configured first."""
    running = []

    def serve(study: config.Study) -> TaskServer:
        study = replace(study, suggestions=replace(study.suggestions, endpoint=endpoint))
        server, thread = _serve_in_thread(study)
        running.append((server, thread))
        return TaskServer(url=f"http://127.0.0.1:{server.port}", study=study)

    yield serve
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class TaskServerProcess:
    """`study serve DIR --port P` in a subprocess, so a test can kill -9 it and start it again."""

    def __init__(self, directory: Path, endpoint: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        toml = directory / config.CONFIG_NAME
        text = toml.read_text(encoding="utf-8")
        assert 'endpoint = ""' in text
        toml.write_text(text.replace('endpoint = ""', f'endpoint = "{endpoint}"', 1), encoding="utf-8")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "study", "serve", str(self.directory), "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        wait_until_up(f"{self.url}/healthz")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: no cleanup, as in a crash
        self.process.wait(timeout=10)
        self.process = None

    @property
    def study(self) -> config.Study:
        return config.load(self.directory)


@pytest.fixture
def task_server_process(study_dir: Path, model_url: str):
    server = TaskServerProcess(study_dir, model_url)
    server.start()
    yield server
    if server.process is not None:
        server.kill()


# -- the browser ------------------------------------------------------------------------------


# `browser`, the session's one Chromium, is in tests/conftest.py: Playwright's sync API allows
# one instance per thread, and the report's tests use it too.


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.page_errors = errors
    # Participant pages carry a Content-Security-Policy (study.server.page_security): anything
    # of the editor it blocked (an inline script or style, a request elsewhere) shows here.
    blocked: list[str] = []
    page.on(
        "console",
        lambda message: blocked.append(message.text)
        if "Content Security Policy" in message.text
        else None,
    )
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not blocked, f"the page's Content-Security-Policy blocked: {blocked}"
