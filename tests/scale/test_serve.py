"""`study serve` runs one worker process per core (or --workers), and a crash of its master
leaves no worker behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .browser import Browser, start_writing
from .servers import ServerProcess, free_port

pytestmark = pytest.mark.slow


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # ppid
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def test_two_workers_serve_one_writer_and_die_with_a_killed_master(study_folder, tmp_path):
    port = free_port()
    with open(tmp_path / "serve.log", "wb") as log:
        # Not in its own process group: SIGKILL reaches the master alone, as when the OOM
        # killer or an operator's `kill -9 <pid>` ends it.
        master = subprocess.Popen(
            [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
             "--workers", "2"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert master.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
        while len(children(master.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = children(master.pid)
        assert len(workers) == 2

        with httpx.Client(base_url=url, timeout=10) as client:
            browser = Browser(client, start_writing(client, "serve-1"))
            for _ in range(10):
                browser.type("abc ")
                assert browser.send()
            assert client.get(f"/api/sessions/{browser.session_id}/state").json()["doc"] == browser.doc

        os.kill(master.pid, signal.SIGKILL)
        master.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in workers), "a worker outlived its killed master"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/healthz", timeout=2)
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()


def test_a_worker_imports_none_of_the_study_at_its_first_requests(study_folder, tmp_path, model_url):
    """The master imports what the participant's requests look up by name (the recruitment
    providers, each paradigm's event rules) before it forks: a worker importing them at its
    first request would hold its GIL while every writer's batches waited."""
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('endpoint = ""', f'endpoint = "{model_url}"', 1))
    port = free_port()
    log = tmp_path / "serve.log"
    server = ServerProcess([sys.executable, "-X", "importtime", "-m", "study", "serve", str(study_folder),
                            "--port", str(port), "--workers", "1"], port, log)
    server.start()
    try:
        started = len(log.read_text().splitlines())
        with httpx.Client(base_url=server.url, timeout=30) as client:
            session_id = start_writing(client, "first-writer")
            browser = Browser(client, session_id)
            browser.type("Once upon a time")
            assert browser.send()
            asked = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon a time"})
            assert asked.status_code == 200
    finally:
        server.stop()
    imported = [line.split("|")[-1].strip() for line in log.read_text().splitlines()[started:]
                if line.startswith("import time:")]
    assert [name for name in imported if name.split(".")[0] in ("study", "boto3", "botocore", "requests")] == []


@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_port_no_participant_could_reach_is_refused_naming_the_flag(study_folder, port):
    # Port 0 listened on a port the kernel picked while the server printed ":0/" as the address
    # participants start at; 70000 ended in a traceback from the HTTP server.
    result = subprocess.run(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", port, "--workers", "1"],
        capture_output=True, text=True, timeout=60,
    )

    assert result.returncode == 2, result.stdout + result.stderr
    assert "Invalid value for '--port'" in result.stderr and "1<=x<=65535" in result.stderr
    assert "Traceback" not in result.stderr and "Serving" not in result.stdout


def test_a_host_given_by_name_is_refused_with_the_address_to_give(study_folder):
    # granian listens on an IP address only: `--host localhost` printed "Serving ... on
    # http://localhost:PORT/" and then died with a traceback ("invalid IP address syntax").
    result = subprocess.run(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--host", "localhost",
         "--port", str(free_port()), "--workers", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert result.returncode != 0, result.stdout + result.stderr
    assert "--host localhost" in result.stderr and "--host 127.0.0.1" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "Serving" not in result.stdout
