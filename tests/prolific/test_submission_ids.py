"""A researcher who gives `bonus`, `approve` or `reject` a participant's PID (Prolific's web app
pays bonuses by participant id) or an id Prolific does not know is told which id to give."""

from __future__ import annotations

import re

from click.testing import CliRunner

from study.cli import main
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part

PID = "4" * 24


def run(*args, code=0):
    result = CliRunner().invoke(main, ["prolific", *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_a_participants_pid_given_for_a_submission_names_their_submission_and_pays_nothing(
    study_folder, prolific, ctx, task_client
):
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL, budget="50.00",
                  completion_url=prolific.url + "/submissions/complete")  # fmt: skip
    folder = str(study_folder)
    study_id = re.search(r"Draft (\w+):", run("draft", folder, "--places", "1", "--publish")).group(1)
    took = take_part(prolific, task_client, study_id, PID)
    run("sync", folder)

    out = run("bonus", folder, PID, "--amount", "0.50", "--reason", "clear ending", code=1)
    assert f"{PID} is a participant's id (PID), not a submission id" in out
    assert f"Fix: give their submission's id instead: {took.submission_id} (Prolific study {study_id}" in out
    assert "Traceback" not in out and "404" not in out
    assert prolific.state.data["bulk_bonuses"] == {}
    assert "bonus" not in run("ledger", folder)

    out = run("approve", folder, PID, code=1)
    assert took.submission_id in out
    assert ctx.client.get(f"submissions/{took.submission_id}/")["status"] == "AWAITING REVIEW"

    out = run("bonus", folder, "f" * 24, "--amount", "0.50", "--reason", "clear ending", code=1)
    assert f"Prolific has no submission {'f' * 24}" in out and "study prolific review DIR" in out
