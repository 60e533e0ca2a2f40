"""`study prolific ledger` as an auditor reads it beside Prolific's invoice: each reward line is
what Prolific charges for that approval, a study's many places fit on a few lines (grouped by
status, `--all` for every one), and what differs (bonuses, a bonus to a rejected submission)
says so."""

from __future__ import annotations

import re

import httpx
import pytest
from click.testing import CliRunner

from study.cli import main
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part

REJECTION = "The session does not show the writing the task asked for, so we cannot approve it. " * 2


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


def test_a_studys_places_are_grouped_by_status_and_all_lists_each(run, study_folder, prolific, task_client):
    study_id = publish(run, study_folder, places=6)
    approved = take_part(prolific, task_client, study_id, "1" * 24)
    rejected = take_part(prolific, task_client, study_id, "2" * 24)
    run("sync", str(study_folder))
    run("approve", str(study_folder), approved.submission_id)
    run("reject", str(study_folder), rejected.submission_id, "--message", REJECTION, "--category", "LOW_EFFORT")
    run("bonus", str(study_folder), approved.submission_id, "--amount", "1.00", "--reason", "thanks")
    run("stop", str(study_folder), study_id)

    lines = ledger_lines(run("ledger", str(study_folder)))
    # The approval (one place: with its submission), the five places nobody took, released
    # together with their reason, and the bonus on its own line.
    assert len(lines) == 3, lines
    (place,) = [line for line in lines if "reward confirmed" in line]
    assert approved.submission_id in place
    (untaken,) = [line for line in lines if "reward cancelled" in line]
    assert "5 x $2.50 +$0.83 fees = $16.65" in untaken and "(5 places; " in untaken
    assert sum("bonus  confirmed" in line for line in lines) == 1

    every = ledger_lines(run("ledger", str(study_folder), "--all"))
    assert len(every) == 7  # six places and the bonus
    assert sum("reward cancelled" in line for line in every) == 5


def test_a_bonus_to_a_rejected_submission_is_paid_and_says_it_was_rejected(run, study_folder, prolific, task_client):
    # Prolific pays a bonus to anyone who took part in the study, a rejected submission too
    # (partial work): the toolkit pays it as asked, and says to whom.
    study_id = publish(run, study_folder, places=1)
    took = take_part(prolific, task_client, study_id, "3" * 24)
    run("sync", str(study_folder))
    run("reject", str(study_folder), took.submission_id, "--message", REJECTION, "--category", "LOW_EFFORT")

    out = run("bonus", str(study_folder), took.submission_id, "--amount", "0.50", "--reason", "partial work")

    assert f"a bonus for {took.submission_id}, a submission you REJECTED" in out
    assert f"Paid $0.50 (+$0.17 fees) for {took.submission_id}, a submission you REJECTED" in out
    assert httpx.post(prolific.url + "/_emulator/settle").status_code == 200
    assert prolific.state.data["submissions"][took.submission_id]["bonus_payments"] == [50]


def test_an_amount_below_the_cent_names_the_dollar_workspaces_cent(run, study_folder, prolific):
    out = run("draft", str(study_folder), "--reward", "2.505", code=1)
    assert "--reward: '2.505' has fractions of a cent; write it like \"2.50\"" in out
    assert "penny" not in out and prolific.state.data["studies"] == {}
