"""A Prolific participant who closed the tab before the completion redirect and comes back
within the study's maximum allowed time still gets sent on with the completion code, and so is
paid; past that time (Prolific has timed them out) the page is closed, as after its hour
(study.providers.ParticipantPath `submission_deadline`). The clock is moved by moving the
session's stored times back, as a late visit would find them."""

from __future__ import annotations

import time

import pytest

from study.prolific import studies
from study.store import writing
from study.store import sessions as session_store
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part

PID = "0123456789abcdef0123late"


@pytest.fixture
def ctx(make_ctx, request):
    """A study whose participants may take three hours (or as a test's parameter says)."""
    return make_ctx(budget="1000.00", **getattr(request, "param", {"maximum_minutes": 180}))


def finished(ctx, prolific, task_client) -> tuple[str, str]:
    """A participant's session that reached the completion page, and the study's code."""
    # $6.00: above Prolific's minimum hourly rate for the 40 minutes of the last test.
    draft = studies.Draft("Write with AI", 600, 2, ctx.settings.estimated_minutes, TASK_URL)
    made = studies.create_draft(ctx, draft)
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], PID, come_back=False)
    return took.session_id, made["completion_code"]


def come_back_after(ctx, task_client, session_id: str, minutes: int):
    """The completion page `minutes` after entry (the survey just before)."""
    now = time.time()
    with writing(ctx.engine) as connection:
        session_store.update_session(connection, session_id, created_at=now - minutes * 60,
                                     completed_at=now - minutes * 60 + 60)  # fmt: skip
    return task_client.get(f"/s/{session_id}/complete")


def test_a_participant_back_at_90_minutes_of_3_hours_is_sent_on_with_the_code(
    ctx, prolific, task_client
):
    session_id, code = finished(ctx, prolific, task_client)

    page = come_back_after(ctx, task_client, session_id, 90)

    assert page.status_code == 302 and page.location.endswith(f"cc={code}")


def test_the_code_is_given_until_the_maximum_allowed_time_then_the_page_closes(
    ctx, prolific, task_client
):
    session_id, code = finished(ctx, prolific, task_client)
    page = come_back_after(ctx, task_client, session_id, 179)
    assert page.status_code == 302 and page.location.endswith(f"cc={code}")

    page = come_back_after(ctx, task_client, session_id, 181)

    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert code not in text and "This session is finished" in text


@pytest.mark.parametrize("ctx", [{"estimated_minutes": 40}], indirect=True)
def test_without_a_maximum_the_page_stays_open_for_prolifics_default_time(
    ctx, prolific, task_client
):
    # Prolific's default maximum allowed time: 3 x 40 + 2 = 122 minutes.
    session_id, code = finished(ctx, prolific, task_client)

    page = come_back_after(ctx, task_client, session_id, 90)

    assert page.status_code == 302 and page.location.endswith(f"cc={code}")
