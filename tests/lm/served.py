"""`study lm serve` in its own process, as a researcher starts it: for tests that must go
through the real command and real HTTP rather than the in-thread server of tests/conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


@contextmanager
def lm_serve(backend: str = "deterministic") -> Iterator[str]:
    """The base URL (".../v1") of a `study lm serve --backend BACKEND` process of this checkout."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(
        [sys.executable, "-m", "study", "lm", "serve", "--backend", backend, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60  # a loaded machine takes a while to import the toolkit
    try:
        while True:
            try:
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"study lm serve did not start: {process.stderr.read().decode()[-500:]}")
            time.sleep(0.1)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)
