"""study.server.wsgi: the study named by STUDY_DIR, served by several gunicorn workers that share
one database."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import httpx
import pytest

from .browser import Browser, start_writing
from .servers import ServerProcess, free_port

pytestmark = pytest.mark.slow


def import_wsgi(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import study.server.wsgi"],
        env=env, capture_output=True, text=True, timeout=60,
    )


def test_without_STUDY_DIR_the_error_names_the_variable():
    result = import_wsgi({k: v for k, v in os.environ.items() if k != "STUDY_DIR"})

    assert result.returncode != 0
    assert "the environment variable STUDY_DIR is not set" in result.stderr


def test_a_folder_without_study_toml_is_named_in_the_error(tmp_path):
    result = import_wsgi({**os.environ, "STUDY_DIR": str(tmp_path)})

    assert result.returncode != 0
    assert f"STUDY_DIR={tmp_path}" in result.stderr
    assert "study.toml" in result.stderr


@pytest.mark.skipif(shutil.which("gunicorn") is None, reason="gunicorn is not installed")
@pytest.mark.parametrize("preload", [False, True], ids=["workers-import", "preload"])
def test_four_workers_share_the_study(study_folder, tmp_path, preload):
    port = free_port()
    command = ["gunicorn", "-w", "4", "-b", f"127.0.0.1:{port}", "study.server.wsgi:app"]
    server = ServerProcess(
        command + (["--preload"] if preload else []), port, tmp_path / "gunicorn.log",
        env={"STUDY_DIR": str(study_folder), "STUDY_SECRET_KEY": "test-key"},
    )
    # Four workers create the tables of a new database at the same moment; none may fail.
    server.start()
    try:
        writers = []
        errors = []

        def write(i):
            try:
                with httpx.Client(base_url=server.url, timeout=10) as client:
                    browser = Browser(client, start_writing(client, f"gunicorn-{i}"))
                    for _ in range(20):
                        browser.type("abc ")
                        assert browser.send()
                    writers.append(browser)
            except BaseException as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not errors, errors
        assert "Worker failed to boot" not in server.log_text()

        with httpx.Client(base_url=server.url) as client:
            for browser in writers:
                state = client.get(f"/api/sessions/{browser.session_id}/state").json()
                assert state["doc"] == browser.doc
                assert state["stored"] == browser.seq
    finally:
        server.stop()


@pytest.mark.parametrize("given", ["lots", "\u00b2"])  # "²" passes str.isdigit, not int()
def test_a_thread_count_that_is_not_a_number_is_named_in_the_error(study_folder, given):
    result = import_wsgi({**os.environ, "STUDY_DIR": str(study_folder), "STUDY_THREADS": given})

    assert result.returncode != 0
    assert f"STUDY_THREADS={given}" in result.stderr and "gunicorn's --threads" in result.stderr


def test_STUDY_THREADS_gives_every_gunicorn_thread_a_connection(study_folder):
    # 40 threads that each hold a connection at once: with the default pool (for 16 threads)
    # the ones past its limit wait for a connection, up to 30 s.
    probe = (
        "import os, threading\n"
        "from study.server.wsgi import app\n"
        "engine = app.extensions['study.engine']\n"
        "held = []\n"
        "for _ in range(40):\n"
        "    taker = threading.Thread(target=lambda: held.append(engine.connect()), daemon=True)\n"
        "    taker.start()\n"
        "    taker.join(3)\n"
        "    if taker.is_alive():\n"
        "        break\n"
        "print(len(held), flush=True)\n"
        "os._exit(0)\n"
    )
    env = {**os.environ, "STUDY_DIR": str(study_folder)}

    def connected(threads: str) -> str:
        result = subprocess.run([sys.executable, "-c", probe], env={**env, "STUDY_THREADS": threads},
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        return result.stdout.strip() or result.stderr

    assert connected("40") == "40"
    # 16 threads and two to spare, one of which the app holds open from its start (study.db,
    # for `study copy-database` to see: study.server.worker_start)
    assert connected("") == "17"
