"""A restarted emulator keeps the workspace: token, studies, submissions, queued payments."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

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
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-c", "from study.prolific.cli.emulate import emulate; emulate()",
         "--port", str(port), "--state", str(tmp_path / "cli.json"), "--token", "tok-123"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        base = f"http://127.0.0.1:{port}/api/v1/"
        assert base in lines[1] and "tok-123" in lines[2]
        for _ in range(100):  # the server may take a moment to listen after printing
            try:
                me = requests.get(base + "users/me/", headers={"Authorization": "Token tok-123"})
                break
            except requests.ConnectionError:
                time.sleep(0.05)
        assert me.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
