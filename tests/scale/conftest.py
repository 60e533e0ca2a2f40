"""Fixtures: a `study serve` process on the study folder's SQLite database."""

from __future__ import annotations

import sys

import pytest

from .servers import ServerProcess, free_port


@pytest.fixture
def study_server(study_folder, tmp_path):
    """`python -m study serve DIR --port P`; stopped at the end."""
    port = free_port()
    server = ServerProcess(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port)],
        port, tmp_path / "server.log",
    )
    server.start()
    yield server
    server.stop()
