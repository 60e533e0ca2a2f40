"""The money guarantee against a real kill: `study prolific bonus` runs as its own process, sends
Prolific's pay call (which pays again if sent again), and is killed with SIGKILL while it waits
for the answer. Running the same command again never sends that pay call a second time, and
Prolific's records end with the bonus paid exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import study as study_package
from study import config
from study.prolific import client, ledger, settings, studies, submissions
from study.prolific.context import open_context
from study.store import reading
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part

REPOSITORY = Path(study_package.__file__).resolve().parents[1]
PAY_PATH = "/api/v1/bulk-bonus-payments/*/pay/"


@pytest.fixture
def ctx(study_folder, prolific):
    """[prolific] written into study.toml, so a `study prolific` process reads the same study."""
    with_prolific(study_folder, completion_url=prolific.url + "/submissions/complete",
                  task_url=TASK_URL, reward="2.50", estimated_minutes=10, budget="1000.00")  # fmt: skip
    study = config.load(study_folder)
    return open_context(study, settings.from_study(study), client.connect())


@pytest.fixture
def submission(ctx, prolific, task_client) -> str:
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], "0123456789abcdef01234567")
    submissions.sync(ctx)
    return took.submission_id


def bonus_command(folder: Path, submission_id: str) -> list[str]:
    return [sys.executable, "-m", "study", "prolific", "bonus", str(folder), submission_id,
            "--amount", "1.20", "--reason", "a vivid scene"]  # fmt: skip


def run(command: list[str]) -> str:
    done = subprocess.run(command, env=environment(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def environment() -> dict:
    # PROLIFIC_TOKEN and PROLIFIC_API_URL come from the `prolific` fixture.
    return {**os.environ, "PYTHONPATH": str(REPOSITORY)}


def held_answers(prolific) -> int:
    return httpx.get(prolific.url + "/_emulator/held").json()["held"]


def wait_until_the_pay_call_waits(prolific, process: subprocess.Popen) -> None:
    """Until the emulator holds the pay call's answer (the process has sent it and waits)."""
    for _ in range(1200):  # a bound for a stuck run, not a measured time
        if held_answers(prolific) == 1:
            return
        if process.poll() is not None:
            pytest.fail(f"the bonus command ended before its pay call: {process.stderr.read()}")
        time.sleep(0.05)
    pytest.fail("the bonus command never sent its pay call")


def pay_calls(prolific) -> list[int]:
    """How often the pay call reached Prolific, per bulk payment."""
    records = httpx.get(prolific.url + "/_emulator/bonus-payments").json()["results"]
    return [record["pay_calls"] for record in records]


def test_a_bonus_process_killed_while_waiting_for_the_pay_answer_is_paid_once(ctx, prolific, submission, study_folder):
    answer = httpx.post(prolific.url + "/_emulator/faults", json={
        "method": "POST", "path": PAY_PATH, "when": "after", "times": 1, "status": None,
        "hold": True})  # fmt: skip
    assert answer.status_code == 200, answer.text
    command = bonus_command(study_folder, submission)
    process = subprocess.Popen(command, env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_until_the_pay_call_waits(prolific, process)
        process.kill()  # SIGKILL: no handler, no cleanup, mid-call
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
        httpx.delete(prolific.url + "/_emulator/faults")  # the held answer is lost
    assert process.returncode == -9
    assert pay_calls(prolific) == [1]
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "intended" and entry["pay_sent_at"] is not None

    # Before Prolific settles it, a re-run sees no bonus there yet and sends nothing.
    assert "Nothing was sent again" in run(command)
    assert pay_calls(prolific) == [1]
    assert httpx.post(prolific.url + "/_emulator/settle").status_code == 200
    assert "Nothing was paid twice" in run(command)
    assert "Already paid" in run(command)

    assert pay_calls(prolific) == [1]
    assert ctx.client.get(f"submissions/{submission}/")["bonus_payments"] == [120]
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "confirmed"
