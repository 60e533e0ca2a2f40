"""A reviewer whose login runs out (or is ended on another machine) while rating: nothing is
saved, they are told so with the way back, and the comment they wrote is not lost: shown to copy
without JavaScript, put back in its box with it."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from study.review import ratings as rating_store
from study.store import reading, writing
from study.store.review_tables import review_logins
from tests.review.chromium import in_chromium
from tests.review.conftest import PASSWORD, csrf_of, log_in
from tests.review.test_browser import open_first_submission, served  # noqa: F401
from tests.review.test_web import next_submission, submitted, team  # noqa: F401

COMMENT = "Strong ending, but the middle drags; I went back twice to check who speaks."


def expire_every_login(engine) -> None:
    """Twelve hours later, as far as the workspace can tell."""
    with writing(engine) as connection:
        connection.execute(update(review_logins).values(expires_at=0))


def ratings_of(engine, submission_id: str) -> list[dict]:
    with reading(engine) as connection:
        return rating_store.of_submission(connection, submission_id)


def test_a_rating_sent_after_the_login_expired_shows_the_comment_and_leads_back(
    workspace, engine, team, submitted
):
    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    expire_every_login(engine)
    response = ana.post(
        f"/review/s/{submission_id}/rating",
        data={"score": "4", "comment": COMMENT, "csrf_token": ana.csrf, "version": "0"},
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 403 and ratings_of(engine, submission_id) == []
    assert "login expired" in page and "not saved" in page
    assert COMMENT in page  # to copy
    back = f'/review/login?next=/review/s/{submission_id}'
    assert f'href="{back}" data-testid="next-step">Log in again' in page
    form = ana.get(back).get_data(as_text=True)
    logged_in = ana.post(
        "/review/login",
        data={"name": "ana", "password": PASSWORD, "csrf_token": csrf_of(form),
              "next": f"/review/s/{submission_id}"},
    )  # fmt: skip
    assert logged_in.location == f"/review/s/{submission_id}"


@pytest.mark.browser
def test_a_keyboard_rating_after_the_login_expired_keeps_the_comment_for_after_logging_in(
    served, engine  # noqa: F811
):
    in_chromium(lambda page: expired_steps(page, served, engine))


def expired_steps(page, served, engine) -> None:
    submission_id = open_first_submission(page, served)
    page.get_by_test_id("comment").fill(COMMENT)
    expire_every_login(engine)
    page.get_by_test_id("score-4").click()
    link = page.get_by_test_id("log-in-again")
    link.wait_for()
    assert "login expired" in page.get_by_test_id("rating-status").text_content()
    assert ratings_of(engine, submission_id) == []
    link.click()
    page.get_by_test_id("name").fill("ana")
    page.get_by_test_id("password").fill(PASSWORD)
    page.get_by_test_id("login").click()
    page.wait_for_url(f"**/review/s/{submission_id}")
    assert page.get_by_test_id("comment").input_value() == COMMENT
    page.get_by_test_id("score-4").click()
    page.get_by_test_id("rating-status").filter(has_text="(saved)").wait_for()
    (stored,) = ratings_of(engine, submission_id)
    assert (stored["score"], stored["comment"]) == (4, COMMENT)



def test_a_decision_sent_after_the_login_expired_shows_the_note_and_leads_back(
    workspace, engine, team, submitted
):
    rita = log_in(workspace, "rita")
    expire_every_login(engine)
    submission_id = "S-ANYTHING"
    response = rita.post(
        f"/review/s/{submission_id}/decision",
        data={"score": "4", "note": "has an ending", "csrf_token": rita.csrf},
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 403 and "has an ending" in page
    assert f'href="/review/login?next=/review/s/{submission_id}/adjudicate"' in page
