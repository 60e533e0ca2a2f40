"""`study prolific balance`: what the study's money is doing, line by line, against its cap."""

from __future__ import annotations

import re

from click.testing import CliRunner

from study.cli import main
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part


def run(*args, code=0):
    result = CliRunner().invoke(main, ["prolific", *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_a_bonus_the_cap_refused_is_not_shown_as_money_released(study_folder, prolific, task_client):
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL, budget="50.00",
                  completion_url=prolific.url + "/submissions/complete")  # fmt: skip
    folder = str(study_folder)
    study_id = re.search(r"Draft (\w+):", run("draft", folder, "--places", "1", "--publish")).group(1)
    took = take_part(prolific, task_client, study_id, "6" * 24)
    run("review", folder, "--yes")
    # A typo: 500.00 for 5.00. The cap refuses it before the pay call; nothing was ever held.
    out = run("bonus", folder, took.submission_id, "--amount", "500.00", "--reason", "typo", code=1)
    assert "Refusing a bonus of $500.00" in out

    out = run("balance", folder)
    assert re.search(r"released +\$0\.00 \(", out), out
    assert "charged    $3.33 ($2.50 to participants + $0.83 Prolific fees)  (paid:" in out
    assert "left under the cap: $46.67" in out
    # The ledger still lists the refused bonus, and why.
    assert "refused by the budget cap" in run("ledger", folder)
