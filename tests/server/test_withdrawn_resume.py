"""A writer who withdrew (`study withdraw`) and comes back to a session they had not finished:
the task server takes no further part from them, by the task link or a page's own address, and
asks them to return what their platform gave them (study.review.rounds.resume_refusal). A
finished session's completion page stays as it was: the work is theirs and paid."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main
from tests.server.flow import finish, start, to_writing

MTURK = {"workerId": "A1GONE0WORKER", "assignmentId": "3ASSIGNGONE01", "hitId": "3HITGONE0001",
         "turkSubmitTo": "https://www.mturk.com"}  # fmt: skip


def withdraw(folder, writer: str) -> None:
    done = CliRunner().invoke(main, ["withdraw", writer, "--study", str(folder)])
    assert done.exit_code == 0, done.output


def test_a_withdrawn_lab_writer_is_not_let_back_into_an_unfinished_session(client, study_folder):
    session_id = start(client, access_code="lab-gone")
    to_writing(client, session_id)
    withdraw(study_folder, "lab-gone")

    for address in ("/task?access_code=lab-gone", f"/s/{session_id}/writing", f"/s/{session_id}/consent"):
        page = client.get(address, follow_redirects=True)
        text = page.get_data(as_text=True)
        assert page.status_code == 403, address
        assert "You have withdrawn from this study" in text
        assert "return" not in text.lower()  # a lab writer has no HIT to give back


def test_a_withdrawn_mturk_worker_is_asked_to_return_the_hit(client, study_folder):
    session_id = start(client, **MTURK)
    withdraw(study_folder, MTURK["workerId"])

    page = client.get("/task", query_string=MTURK, follow_redirects=True)
    assert page.status_code == 403
    assert "Please return this HIT" in page.get_data(as_text=True)
    assert client.get(f"/s/{session_id}/consent").status_code == 403


def test_a_finished_session_keeps_its_completion_page_after_a_withdrawal(client, study_folder):
    session_id = start(client, access_code="lab-done")
    to_writing(client, session_id)
    finish(client, session_id)
    withdraw(study_folder, "lab-done")

    page = client.get(f"/s/{session_id}/complete")
    assert page.status_code == 200
    assert "withdrawn" not in page.get_data(as_text=True)
