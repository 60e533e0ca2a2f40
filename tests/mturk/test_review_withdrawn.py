"""A writer who withdrew (`study withdraw --study`) after submitting their HIT: their session
leaves the study's data, not `study mturk review`. They did the work, so it is decided by the same
rules as anyone's and paid once; the proposal says they withdrew, so the researcher knows why
the session is in no export."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main
from study.mturk import ledger
from study.store import reading
from tests.mturk.conftest import post_hit
from tests.mturk.walk import take_hit


def test_review_pays_a_withdrawn_writers_submitted_hit_once_and_says_they_withdrew(
    ctx, cli, emulator, task_app, study_folder
):
    hit_id = post_hit(ctx, assignments=2)
    leaves = take_hit(emulator.url, task_app.test_client(), hit_id, "A1LEAVES")
    stays = take_hit(emulator.url, task_app.test_client(), hit_id, "A1STAYS")
    withdrawn = CliRunner().invoke(main, ["withdraw", "A1LEAVES", "--study", str(study_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output

    reviewed = cli("review", str(study_folder), "--yes")
    again = cli("review", str(study_folder), "--yes")

    assert reviewed.exit_code == 0, reviewed.output
    proposed = reviewed.stdout.split(f"APPROVE  {leaves.assignment_id}", 1)[1].split("APPROVE", 1)[0]
    assert "! the writer withdrew (study withdraw --study)" in proposed
    assert f"APPROVE  {stays.assignment_id}" in reviewed.stdout
    assert "writer withdrew" not in reviewed.stdout.split(f"APPROVE  {stays.assignment_id}", 1)[1]
    assert f"{leaves.assignment_id}: approved" in reviewed.stdout
    assert "Nothing to review" in again.stdout  # decided once, paid once
    with reading(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, leaves.assignment_id)
        assert entry["status"] == "confirmed"
        assert ledger.count(connection, ctx.environment, kind="reward", status="confirmed") == 2
    (assignment,) = [a for a in emulator.state.data["assignments"].values()
                     if a["AssignmentId"] == leaves.assignment_id]  # fmt: skip
    assert assignment["AssignmentStatus"] == "Approved"
