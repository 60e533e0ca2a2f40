"""The completion page of a Prolific session closes once `sync` has seen the submission at
Prolific, as MTurk's does once MTurk has the assignment (study.providers.ParticipantPath
`submitted`; README, "A finished session stays closed"): whoever later holds the session id
(a log, a shared link) is no longer sent on with the study's completion code, which every
participant of that Prolific study shares."""

from __future__ import annotations

from study.prolific import studies, submissions
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part


def test_the_completion_page_stops_giving_the_code_once_sync_saw_the_submission(ctx, prolific, task_client):
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], "0123456789abcdef01234567")
    assert made["completion_code"] in took.completion
    submissions.sync(ctx)

    again = task_client.get(f"/s/{took.session_id}/complete")

    assert again.status_code == 200, again.location
    page = again.get_data(as_text=True)
    assert made["completion_code"] not in page and "This session is finished" in page
