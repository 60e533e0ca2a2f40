"""A study database that stops taking writes while writers type (its disk full): a real `study
serve` answers the writer 503, which the editor retries without losing anything, never
acknowledges an event it did not store, and tells the operator the file and the fix in one line
rather than a traceback per request; once there is room again it stores by itself. Started again
on a folder turned read-only, it refuses to start rather than refuse every writer."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from study.cli import main
from tests.read_only import read_only
from tests.scale.browser import Browser, start_writing
from tests.scale.servers import study_serve

TEXT = "A writer goes on typing while the disk under the study fills up. "


def _server_processes(group: int) -> list[int]:
    """The `study serve` master and its worker processes (one process group)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) == group:
                found.append(int(pid))
        except OSError:  # ended meanwhile
            continue
    return found


def _limit_file_size(group: int, limit: int) -> None:
    """No file of the server's may grow past `limit` bytes from now on: a disk filling up
    under a running server, without a small file system to mount."""
    for pid in _server_processes(group):
        _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
        # The soft limit only: an unprivileged process may raise it again, as the test does.
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))


def _stored_seqs(database: Path, session_id: str) -> set[int]:
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        return {seq for (seq,) in connection.execute("SELECT seq FROM events WHERE session_id = ?", (session_id,))}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit on another process: Linux")
def test_a_full_disk_refuses_event_batches_with_the_file_and_the_fix_and_loses_nothing(study_folder, tmp_path):
    server = study_serve(study_folder, tmp_path / "server.log")
    database = study_folder / "study.db"
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "disk-1"))
        browser.typed(TEXT)
        files = [database, Path(f"{database}-wal")]
        _limit_file_size(server.process.pid, max(path.stat().st_size for path in files) + 100)

        characters = iter(TEXT * 1000)
        while browser.send():  # typing on until a batch is refused
            browser.type("".join(next(characters) for _ in range(3)))
        refused = client.post(f"/api/sessions/{browser.session_id}/events",
                              json={"events": browser.pending[:50]})  # fmt: skip
        acked_while_full = browser.progress()[0]

        _limit_file_size(server.process.pid, resource.RLIM_INFINITY)  # room again
        while browser.pending:
            assert browser.send(), "the server did not store again once the disk had room"
    finally:
        server.stop()
    log = server.log_text()

    assert refused.status_code == 503  # the editor keeps the batch and retries (editor-outbox.js)
    assert "your work is kept" in refused.json()["error"]
    assert f"cannot write the study's database {database}" in log
    assert f"Fix: free space on the disk holding {study_folder}" in log
    assert "Traceback" not in log
    assert acked_while_full <= _stored_seqs(database, browser.session_id)
    assert _stored_seqs(database, browser.session_id) == set(range(browser.seq))


def test_a_server_started_again_on_a_read_only_folder_refuses_to_start_with_the_fix(study_folder, tmp_path):
    # The server was killed (its -wal and -shm left beside study.db, with which SQLite opens the
    # database read-only without a word), and the disk was remounted read-only after an error.
    server = study_serve(study_folder, tmp_path / "server.log")
    port = server.port
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "disk-2"))
        browser.typed(TEXT)
    finally:
        server.kill()
    assert Path(f"{study_folder / 'study.db'}-shm").exists()

    with read_only(study_folder):
        again = subprocess.Popen([sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
                                  "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)  # fmt: skip
        try:
            out, err = again.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(again.pid, signal.SIGKILL)
            again.communicate()
            pytest.fail("study serve started on a read-only study folder")
        status = CliRunner().invoke(main, ["status", str(study_folder)])

    assert again.returncode == 1, out + err
    assert f"cannot serve the study: {study_folder}" in err and "cannot be written" in err
    assert f"Fix: make {study_folder} and the files in it writable" in err
    assert "Traceback" not in err and "Serving" not in out
    # `study status` reads the database, and says why no server could store anything.
    assert status.exit_code == 0, status.output
    assert f"Warning: {study_folder} and {study_folder / 'study.db'} cannot be written" in status.output
    assert f"Fix: make {study_folder} and the files in it writable" in status.output
    assert _stored_seqs(study_folder / "study.db", browser.session_id) == set(range(browser.seq))


def test_status_warns_of_a_disk_nearly_full_under_the_database(study_folder, tmp_path):
    # A small file system holding the study, nearly filled by something else (logs, backups).
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=120m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        folder = disk / "study"
        shutil.copytree(study_folder, folder)
        with closing(sqlite3.connect(folder / "study.db")):
            pass  # a study served once: status reads its (empty) database
        roomy = CliRunner().invoke(main, ["status", str(folder)])
        (disk / "backups.tar").write_bytes(bytes(30 * 2**20))  # 90 MB left, under the 100 MB warned of
        full = CliRunner().invoke(main, ["status", str(folder)])
    finally:
        subprocess.run(["umount", str(disk)], check=True)

    assert roomy.exit_code == 0 and "Warning: the disk" not in roomy.output, roomy.output
    assert full.exit_code == 0, full.output
    assert f"Warning: the disk holding {folder / 'study.db'} has" in full.output
    assert f"Fix: free space on it (`df -h {folder}`)" in full.output
