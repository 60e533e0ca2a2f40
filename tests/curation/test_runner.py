"""Running on all cores gives the same results, in the same order, as one process, and a job
that fails in any way is reported without stopping or hanging the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from study.curation.formats import session_files
from study.curation.runner import JobFailed, run, stats_paths, validate_paths

from .conftest import DATA, small_session, write_lines

ROOT = Path(__file__).resolve().parents[2]


def test_parallel_and_serial_runs_agree():
    files = session_files([DATA])
    serial = [r.to_dict() for r in validate_paths(files, processes=1, progress=False)]
    parallel = [r.to_dict() for r in validate_paths(files, processes=2, progress=False)]
    assert serial == parallel and len(serial) == 32
    rows = [row for row, _ in stats_paths(files, "paper", processes=2, progress=False)]
    assert [row["session_id"] for row in rows] == [f.stem for f in files]


# --- a job that fails, however it fails, is reported and never hangs the run --------------------

KINDS = {
    "exit": "its worker process died",  # os._exit: no exception, no result
    "raise-unpicklable": "LockedError: holds a lock",
    "raise-old-style": "OldStyleError: textDelta.ops[1].retain runs past the end",
    "return-unreadable": "its worker process died or sent back a result that could not be read",
    "return-unpicklable": "cannot pickle",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_runner_survives_a_failing_worker_and_names_the_job(kind):
    # In a subprocess under a timeout: a runner that hangs fails here instead of hanging CI.
    done = subprocess.run(
        [sys.executable, "-m", "tests.curation.crashing_jobs", kind],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout)
    assert outcomes[:5] + outcomes[6:] == [n * n for n in range(12) if n != 5]
    assert outcomes[5][0] == "failed" and KINDS[kind] in outcomes[5][1]


def test_without_a_handler_a_failed_job_raises_naming_the_item():
    from .crashing_jobs import job

    items = [(4, "raise-old-style"), (5, "raise-old-style")]
    with pytest.raises(JobFailed, match=r"^\(5, 'raise-old-style'\): OldStyleError"):
        list(run(job, items, processes=1, progress=False))


def test_a_crashing_check_becomes_an_error_naming_the_file(tmp_path, monkeypatch):
    import study.curation.runner as runner

    def broken_check(path, keep):
        raise RuntimeError("a bug in a check")

    monkeypatch.setattr(runner, "validate_file", broken_check)
    files = [write_lines(tmp_path / "s.jsonl", small_session())]
    (report,) = validate_paths(files, processes=1, progress=False)
    assert not report.ok and report.file == str(files[0])
    (issue,) = report.issues
    assert issue.code == "crash" and "RuntimeError: a bug in a check" in issue.message
