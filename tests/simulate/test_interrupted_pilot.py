"""`study simulate` interrupted with Ctrl-C half-way, as a researcher stops a pilot: writers not
yet started never enter, those at work finish their sessions (none is left half-written), and
the run says so at once rather than seeming to ignore the key for the study's minimum time."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from sqlalchemy.exc import OperationalError

from study import config
from study.cli import write_study_files
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT


def _sessions(study) -> list[dict]:
    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            return session_store.all_sessions(connection)
    except OperationalError:  # the run has not made its tables yet
        return []
    finally:
        engine.dispose()


def test_ctrl_c_half_way_lets_the_writers_at_work_finish_and_says_so(tmp_path, suggestion_model):
    folder = tmp_path / "pilot"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 4", **CONTACT})
    study = config.load(folder)
    run = subprocess.Popen(
        [sys.executable, "-m", "study", "simulate", str(folder), "--writers", "3", "--parallel", "1",
         "--suggestions-endpoint", suggestion_model],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A background job's SIGINT may be ignored by the shell that started the test run.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not any(s["stage"] == "writing" for s in _sessions(study)):  # the first writer is writing
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode != 0
    assert "Traceback" not in err, err
    assert ("Interrupted: no more writers start; those at work finish their sessions first (up to "
            "[session] min_seconds = 4 and their writing). Press Ctrl-C again to stop them now") in out  # fmt: skip
    sessions = _sessions(study)
    assert len(sessions) == 1 and sessions[0]["stage"] == "complete"  # writers 1 and 2 never entered
    assert f"session {sessions[0]['session_id']}" in out
