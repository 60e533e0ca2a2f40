"""A worker who closed the tab before pressing Submit and comes back later (README, "A finished
session stays closed"): MTurk's HIT stays in their dashboard, whose frame reloads the task URL,
until the assignment's time runs out, so the completion page keeps its Submit HIT form that long
(study.providers.ParticipantPath `submission_deadline`); a lab session closes after its hour.
The clock is moved by moving the session's stored times back, as a late visit would find them."""

from __future__ import annotations

import time

import pytest

from study import config
from study.server import create_app
from study.store import reading, writing
from study.store import sessions as session_store
from tests.server.flow import finish, start, to_writing

MTURK = {"workerId": "A1LATE0WORKER", "assignmentId": "3ASSIGNLATE01", "hitId": "3HITLATE0001",
         "turkSubmitTo": "https://www.mturk.com"}  # fmt: skip


@pytest.fixture
def client(study_folder):
    """The task server of a study whose workers have three hours per assignment."""
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace("assignment_minutes = 60", "assignment_minutes = 180"))
    return create_app(config.load(study_folder), suggestion_engine=object()).test_client()


def finished(client, **entry) -> str:
    session_id = start(client, **entry)
    to_writing(client, session_id)
    finish(client, session_id)
    return session_id


def come_back_after(client, session_id: str, minutes: int) -> tuple[str, str]:
    """The completion page `minutes` after entry (the survey just before), and the session's
    verification code."""
    engine = client.application.extensions["study.engine"]
    now = time.time()
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, created_at=now - minutes * 60,
                                     completed_at=now - minutes * 60 + 60)  # fmt: skip
    with reading(engine) as connection:
        code = session_store.get(connection, session_id)["verification_code"]
    return client.get(f"/s/{session_id}/complete").get_data(as_text=True), code


def test_a_worker_back_at_90_minutes_of_a_3_hour_assignment_can_still_submit_the_hit(client):
    session_id = finished(client, **MTURK)

    page, code = come_back_after(client, session_id, 90)

    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in page
    assert code in page and "3ASSIGNLATE01" in page


def test_the_form_stays_until_the_assignments_time_runs_out_then_the_page_closes(client):
    session_id = finished(client, **MTURK)
    page, code = come_back_after(client, session_id, 179)
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in page

    page, code = come_back_after(client, session_id, 181)

    assert "This session is finished" in page
    assert code not in page and "3ASSIGNLATE01" not in page and "<form" not in page


def test_a_lab_session_closes_after_its_hour_whatever_mturks_assignment_time(client):
    session_id = finished(client, access_code="lab-late-9")

    page, code = come_back_after(client, session_id, 90)

    assert "This session is finished" in page
    assert code not in page and "lab-late-9" not in page


def test_a_worker_back_at_an_unfinished_session_after_the_assignments_time_is_told_it_ran_out(client):
    """MTurk abandons an assignment once its time is up and takes no submission for it: the
    worker who comes back through the same task URL is told so, not sent back to writing."""
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    assert client.get("/task", query_string=MTURK).status_code == 302  # still in time: resumes

    come_back_after(client, session_id, 181)
    again = client.get("/task", query_string=MTURK)

    assert again.status_code == 403, again.location
    said = again.get_data(as_text=True)
    assert "Your time for this HIT ran out (180 minutes after you accepted it)" in said
    assert "can no longer be completed or paid" in said

