"""One corrupted session never hangs a command: each reports the file and exits 1.

A session whose delta no longer applies (a retain edited past the end of the text) makes the
replay in a worker process raise DeltaError. Before issue 11, `study release verify` waited
for ever: the exception could not be unpickled and the pool's result thread died. Each
command runs here as a curator runs it, in a subprocess on two worker processes, under a
timeout, so a hang fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from study.release.build import build_release
from study.release.checksums import write_sums
from study.release.keys import init_keyfile, load_key
from study.release.preflight import BuildError
from study.release.pseudonyms import released_session_id
from tests.release.conftest import SMALLEST, copy_source

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = [SMALLEST, "88daaed513824fbd9c77746eec7862d9", "7748d213f66743dd9abe45f23dacca99"]
CORRUPTED = "88daaed513824fbd9c77746eec7862d9"
TIMEOUT = 300  # seconds; each command takes a few on this shared machine


def corrupt(path: Path) -> int:
    """Push one mid-session retain past the end of the text; returns its line number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number in range(len(lines) // 2, len(lines)):
        event = json.loads(lines[number])
        ops = event["textDelta"]["ops"] if event["textDelta"] else []
        if ops and "retain" in ops[0]:
            ops[0]["retain"] += 100_000
            lines[number] = json.dumps(event)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return number + 1
    raise AssertionError(f"{path} has no retain to corrupt")


def study(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "study", *map(str, args)],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    folder = copy_source(tmp_path_factory.mktemp("corrupt") / "coauthor", SESSIONS)
    line = corrupt(folder / "sessions" / f"{CORRUPTED}.jsonl")
    return folder, line


def test_validate_names_the_file_and_line(source):
    folder, line = source
    done = study("curate", "validate", folder, "-j", "2", "--no-progress")
    assert done.returncode == 1, done.stderr
    assert f"{CORRUPTED}.jsonl line {line}: textDelta.ops[0].retain" in done.stdout
    assert "runs past the end of the text" in done.stdout
    assert "2 valid, 1 with errors" in done.stdout


def test_stats_skips_the_file_and_writes_the_others(source, tmp_path):
    folder, _ = source
    out = tmp_path / "stats.csv"
    done = study("curate", "stats", folder / "sessions", "-j", "2", "--out", out, "--no-progress")
    assert done.returncode == 1
    assert f"skipped {folder / 'sessions' / CORRUPTED}.jsonl" in done.stderr
    assert "runs past the end of the text" in done.stderr
    assert len(out.read_text().splitlines()) == 1 + 2


def test_release_build_refuses_it_and_releases_nothing(source, tmp_path):
    folder, line = source
    key = init_keyfile(tmp_path / "study.key")
    out = tmp_path / "out"
    done = study(
        "release", "build", folder, "--version", "1.0.0", "--out", out, "--key", key.path,
        "-j", "2", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 1
    assert "1 session(s) are not valid logs" in done.stderr
    assert f"{CORRUPTED}.jsonl line {line}: textDelta.ops[0].retain" in done.stderr
    assert not any(out.glob("coauthor-*"))


def test_release_verify_of_an_edited_session_reports_it(tmp_path):
    key = init_keyfile(tmp_path / "study.key")
    built = build_release(
        copy_source(tmp_path / "coauthor", SESSIONS),
        version="1.0.0",
        out=tmp_path / "out",
        key_path=key.path,
        processes=2,
    )
    released = released_session_id(load_key(key.path), CORRUPTED, "coauthor")
    line = corrupt(built.directory / "sessions" / f"{released}.jsonl")
    write_sums(built.directory)  # edited with care: only the log itself is wrong
    done = study("release", "verify", built.directory, "-j", "2")
    assert done.returncode == 1, done.stderr
    assert "  FAIL schemas" in done.stdout and "  FAIL leak scan" in done.stdout
    assert f"sessions/{released}.jsonl line {line}: textDelta.ops[0].retain" in done.stdout
    assert f"sessions/{released}.jsonl (its text): not scanned" in done.stdout
    assert done.stdout.strip().endswith("NOT verified")


@pytest.fixture
def deadline():
    """Fail, rather than hang, a test that runs a pool in this process."""

    def expired(signum, frame):
        raise TimeoutError(f"no answer within {TIMEOUT} s: the runner hangs")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TIMEOUT)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_session_that_breaks_redaction_in_a_worker_stops_the_build_by_name(
    tmp_path, monkeypatch, deadline
):
    from study.release import redact_source

    real = redact_source.redact_session

    def dies_on_one(session_id, events, detector):
        if session_id == CORRUPTED:
            os._exit(9)  # the worker dies outright, as under the out-of-memory killer
        return real(session_id, events, detector)

    monkeypatch.setattr(redact_source, "redact_session", dies_on_one)  # forked workers inherit it
    key = init_keyfile(tmp_path / "study.key")
    source = copy_source(tmp_path / "coauthor", SESSIONS)
    with pytest.raises(BuildError, match=rf"{CORRUPTED}\.jsonl: could not be redacted"):
        build_release(
            source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=2
        )
    assert not list((tmp_path / "out").iterdir())  # nothing released, no partial folder
