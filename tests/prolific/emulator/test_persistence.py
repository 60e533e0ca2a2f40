"""A restarted emulator keeps the workspace: token, studies, submissions, queued payments."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import requests
from click.testing import CliRunner

from study.prolific.cli.emulate import emulate
from study.prolific.emulator import State, serve_in_thread
from tests.prolific.emulator.conftest import Researcher, control, take_part_and_finish


def test_a_restart_keeps_studies_submissions_and_payments(tmp_path):
    path = tmp_path / "prolific-emulator.json"
    first = serve_in_thread(State(path))
    try:
        researcher = Researcher(first)
        study = researcher.published()
        take_part_and_finish(first, study["id"], "a" * 24)
        bulk = researcher.post("submissions/bonus-payments/", json={
            "study_id": study["id"], "csv_bonuses": f"{'a' * 24},2.00"}).json()
        researcher.post(f"bulk-bonus-payments/{bulk['id']}/pay/")  # queued, not yet settled
        token = first.state.token
    finally:
        first.stop()
    second = serve_in_thread(State(path))
    try:
        assert second.state.token == token
        researcher = Researcher(second)
        assert researcher.get(f"studies/{study['id']}/").json()["status"] == "ACTIVE"
        (submission,) = researcher.submissions(study["id"])
        assert submission["status"] == "AWAITING REVIEW" and submission["bonus_payments"] == []
        assert control(second, "settle").json() == {"settled": 1}
        (submission,) = researcher.submissions(study["id"])
        assert submission["bonus_payments"] == [200]
    finally:
        second.stop()


def test_the_command_documents_its_options():
    result = CliRunner().invoke(emulate, ["--help"])
    assert result.exit_code == 0
    for option in ("--port", "--state", "--pay-delay", "--token"):
        assert option in result.output


def test_the_command_serves_and_prints_the_base_url_and_token(tmp_path):
    # --port 0: the port it listens on is printed once it listens (a port found free here and
    # passed on could be another test's server by the time the emulator bound it).
    process = subprocess.Popen(
        [sys.executable, "-c", "from study.prolific.cli.emulate import emulate; emulate()",
         "--port", "0", "--state", str(tmp_path / "cli.json"), "--token", "tok-123"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        base = re.search(r"API base URL: (http://127\.0\.0\.1:(\d+)/api/v1/)", lines[1])
        assert base and base.group(2) != "0" and "tok-123" in lines[2], lines
        me = requests.get(base.group(1) + "users/me/", headers={"Authorization": "Token tok-123"})
        assert me.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
