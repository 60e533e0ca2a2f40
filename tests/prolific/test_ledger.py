"""`study prolific ledger` as an auditor reads it beside Prolific's invoice: each reward line is
what Prolific charges for that approval."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from study.cli import main
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part


@pytest.fixture
def run(prolific, study_folder):
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL,
                  budget="50.00", completion_url=prolific.url + "/submissions/complete")  # fmt: skip

    def invoke(*args, code=0):
        result = CliRunner().invoke(main, ["prolific", *args], catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def publish(run, study_folder, places: int) -> str:
    out = run("draft", str(study_folder), "--places", str(places), "--publish")
    return re.search(r"Draft (\w+):", out).group(1)


def ledger_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if re.match(r"\d{4}-\d\d-\d\d ", line)]


def test_an_approved_place_is_booked_at_what_prolific_charges_for_it(run, study_folder, prolific, task_client):
    # $2.50 and Prolific's third: the calculator says $10.00 for three places (one rounding of
    # $2.4975), but each approval is charged $3.33; split over the places, the first was $3.34.
    study_id = publish(run, study_folder, places=3)
    took = take_part(prolific, task_client, study_id, "1" * 24)
    run("sync", str(study_folder))
    before = prolific.state.data["balance"]

    out = run("approve", str(study_folder), took.submission_id)

    charged = before - prolific.state.data["balance"]
    assert charged == 333
    # The emulator says what the approval pays, as it does for a bonus or a publish.
    assert "$3.33 ($2.50 to participants + $0.83 Prolific fees) (emulator money)" in out
    (approved,) = [line for line in ledger_lines(run("ledger", str(study_folder)))
                   if took.submission_id in line]  # fmt: skip
    assert re.search(r"reward confirmed .*\$2\.50 \+\s*\$0\.83 fees", approved), approved
    out = run("ledger", str(study_folder))
    # Every place is reserved at that charge, so the cap counts what approving all three takes.
    assert "committed $9.99 ($7.50 to participants + $2.49 Prolific fees)" in out
    assert "paid $3.33 ($2.50 to participants + $0.83 Prolific fees)" in out
