"""A writer who withdrew (`study withdraw --study`) leaves the reviewers' workspace: their
qualification submission is in nobody's queue, page or count, and the ratings given it leave the
agreement figures (they stay in the audit log)."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main
from tests.review.conftest import add_reviewer, log_in
from tests.review.sessions import finished_session


def withdraw(folder, writer: str) -> None:
    done = CliRunner().invoke(main, ["withdraw", writer, "--study", str(folder)])
    assert done.exit_code == 0, done.output


def next_submission(client) -> str:
    response = client.post("/review/next", data={"csrf_token": client.csrf})
    assert response.status_code == 302
    return response.location.rsplit("/", 1)[-1]


def test_a_withdrawn_writers_submission_leaves_the_queue_the_counts_and_the_agreement(
    review_folder, workspace, engine
):
    finished_session(engine, worker_id="A1LEAVES", round_name="qualification", completed_at=1000.0)
    finished_session(engine, worker_id="A1STAYS", round_name="qualification", completed_at=2000.0)
    for name in ("ana", "ben"):
        add_reviewer(engine, name)
    add_reviewer(engine, "rita", role="researcher")
    ana, ben, rita = (log_in(workspace, name) for name in ("ana", "ben", "rita"))
    gone = next_submission(ana)  # the oldest: the writer who withdraws
    ana.post(f"/review/s/{gone}/rating", data={"score": "5", "csrf_token": ana.csrf})
    assert next_submission(ben) == gone  # assigned to ben, not yet rated

    withdraw(review_folder, "A1LEAVES")

    # Nobody is handed it again, not even ben, whose assignment would come first.
    stays = next_submission(ben)
    assert stays != gone and next_submission(ana) == stays
    for client in (ana, ben):
        page = client.get(f"/review/s/{gone}")
        assert page.status_code == 403 and "its writer withdrew" in page.get_data(as_text=True)
        rated = client.post(f"/review/s/{gone}/rating", data={"score": "4", "csrf_token": client.csrf})
        assert rated.status_code == 403
    assert gone not in ana.get("/review/").get_data(as_text=True)  # not among her ratings either
    assert rita.get(f"/review/s/{gone}/adjudicate").status_code == 403

    results = rita.get("/review/results").get_data(as_text=True)
    assert gone not in results
    assert "awaiting ratings (1)" in results
    assert "0 submissions with two or more ratings; 0 ratings" in results  # ana's 5 left the figures
    assert gone in rita.get("/review/audit").get_data(as_text=True)  # the log keeps what was done

    status = CliRunner().invoke(main, ["status", str(review_folder)], catch_exceptions=False).output
    assert "Rounds (sessions): qualification 1 (1 complete), main 0 (0 complete)" in status
    assert ("Review: 1 submissions, 0 ratings by 0 reviewers; awaiting ratings 1, needs adjudication 0, "
            "passed 0, failed 0, disqualified 0; 1 submission(s) of writers who withdrew left out") in status

