"""`study serve` on a host that lets a process open too few files for its writers' connections:
the operator is told at start, with the numbers and the fix (study.server.serving.files_short),
and the number of writers it advises is served; more workers than the host can start are
refused before any starts (study.server.serving.workers_refused)."""

from __future__ import annotations

import resource
import shlex
import socket
import sys

import pytest

from .servers import ServerProcess, free_port

HOST_LIMIT = 600  # files a process may open here (`ulimit -n`: the hard limit too)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(resource.getrlimit(resource.RLIMIT_NOFILE)[1] < HOST_LIMIT,
                       reason=f"this machine's own limit of open files is below {HOST_LIMIT}"),
]


def serve_under_the_limit(folder, tmp_path, writers: int) -> ServerProcess:
    port = free_port()
    serve = [sys.executable, "-m", "study", "serve", str(folder), "--port", str(port), "--workers", "1",
             "--writers", str(writers)]
    server = ServerProcess(["sh", "-c", f"ulimit -n {HOST_LIMIT} && exec {shlex.join(serve)}"], port,
                           tmp_path / f"serve-{writers}.log")
    server.start()
    return server


def held_connections_answered(server: ServerProcess, count: int) -> int:
    """Open `count` connections, each asking for /healthz and kept open; how many were answered."""
    held, answered = [], 0
    try:
        for _ in range(count):
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            held.append(connection)
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: study\r\n\r\n")
            try:
                answered += connection.recv(64).startswith(b"HTTP/1.1 200")
            except TimeoutError:
                pass
    finally:
        for connection in held:
            connection.close()
    return answered


def test_a_host_limit_below_the_writers_is_named_at_start_with_the_fix(study_folder, tmp_path):
    server = serve_under_the_limit(study_folder, tmp_path, writers=1000)
    try:
        log = server.log_text()
    finally:
        server.stop()
    # 1,000 connections, 20 threads' database files (16 and 4 for model calls) and the rest.
    assert f"this host lets a process open {HOST_LIMIT} files" in log
    assert "each worker needs 1124 for 1000 open connections" in log
    assert "LimitNOFILE=1124" in log and "--writers 476" in log


def test_the_advised_number_of_writers_is_served_without_a_warning(study_folder, tmp_path):
    server = serve_under_the_limit(study_folder, tmp_path, writers=476)
    try:
        # No warning of open files (the start's other notes, e.g. of the preregistration, may stand).
        assert "lets a process open" not in server.log_text()
        assert held_connections_answered(server, 476) == 476
    finally:
        server.stop()


def test_threads_that_alone_need_more_files_than_the_host_allows_are_named_in_the_fix(study_folder, tmp_path):
    # 200 threads and 4 for model calls need 676 files before any connection: no number of
    # writers fits under 600, so "pass --writers 1" would leave the server as short as before.
    port = free_port()
    serve = [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port), "--workers", "1",
             "--threads", "200"]
    server = ServerProcess(["sh", "-c", f"ulimit -n {HOST_LIMIT} && exec {shlex.join(serve)}"], port,
                           tmp_path / "serve-threads.log")
    server.start()
    try:
        log = server.log_text()
    finally:
        server.stop()
    assert f"this host lets a process open {HOST_LIMIT} files" in log
    assert "--writers 1 " not in log, log
    assert "pass fewer --threads" in log, log


def _serve_refused(folder, *flags: str, limit: int | None = None):
    import subprocess

    serve = [sys.executable, "-m", "study", "serve", str(folder), "--port", str(free_port()), *flags]
    command = ["sh", "-c", f"ulimit -n {limit} && exec {shlex.join(serve)}"] if limit else serve
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "Serving" not in result.stdout, result.stdout + result.stderr
    return result.stderr


def test_more_workers_than_the_master_may_open_pipes_to_are_refused_before_any_starts(study_folder):
    # granian's master holds three files for each worker: 300 need 964, over the host's 600.
    refused = _serve_refused(study_folder, "--workers", "300", limit=HOST_LIMIT)
    assert "--workers 300: the master process would need 964 open files" in refused
    assert f"this host lets it open {HOST_LIMIT}" in refused and "Fix: pass fewer --workers" in refused


def test_more_workers_than_the_host_has_memory_for_are_refused_with_how_many_fit(study_folder):
    from study.server.serving import _available_memory_mb

    available = _available_memory_mb()
    if available is None:
        pytest.skip("no /proc/meminfo: not Linux")
    fit = available // 100
    # Twice what fits: other tests free memory between this reading and the server's, and one
    # worker over could fit by then and start serving.
    workers = 2 * fit + 1
    files = 3 * workers + 64 + 100
    if files > resource.getrlimit(resource.RLIMIT_NOFILE)[1]:
        pytest.skip("this machine's limit of open files refuses that many workers first")
    refused = _serve_refused(study_folder, "--workers", str(workers), limit=files)
    assert f"--workers {workers}: at a launch each worker process holds about 100 MB" in refused
    assert "Fix: pass at most --workers " in refused
    advised = int(refused.split("at most --workers ")[1].split()[0])
    assert abs(advised - fit) <= fit // 10 + 1
