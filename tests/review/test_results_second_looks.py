"""The researcher's agreement figures say when some of the ratings they are computed from were
changed after their reviewer saw another's: blind first ratings are what the README promises,
and a second look can only bring reviewers closer."""

from __future__ import annotations

import re

from tests.review.conftest import log_in
from tests.review.test_web import next_submission, submitted, team  # noqa: F401


def rate(client, submission_id: str, score: int, version: int, comment: str = "") -> None:
    response = client.post(
        f"/review/s/{submission_id}/rating",
        data={"score": str(score), "comment": comment, "csrf_token": client.csrf,
              "version": str(version)},
    )  # fmt: skip
    assert response.status_code == 302, response.get_data(as_text=True)


def second_looks(rita) -> str:
    page = rita.get("/review/results").get_data(as_text=True)
    found = re.search(r'data-testid="second-looks">(.*?)</p>', page, re.S)
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else ""


def test_the_agreement_says_how_many_ratings_changed_after_their_reviewer_saw_anothers(
    workspace, team, submitted  # noqa: F811
):
    ana, ben, rita = log_in(workspace, "ana"), log_in(workspace, "ben"), log_in(workspace, "rita")
    first = next_submission(ana)
    rate(ana, first, 4, 0)
    rate(ana, first, 3, 1)  # a change before anyone else rated: still blind
    second = next_submission(ana)
    rate(ana, second, 2, 0)
    assert next_submission(ben) == first
    rate(ben, first, 5, 0)
    assert next_submission(ben) == second
    rate(ben, second, 2, 0)
    assert second_looks(rita) == ""
    rate(ana, second, 2, 1, comment="agreed on reading again")  # the comment only: same score
    assert second_looks(rita) == ""
    rate(ana, first, 5, 2)  # after seeing ben's 5
    said = second_looks(rita)
    assert said.startswith("1 of these 4 ratings had their score changed after their reviewer "
                           "saw another reviewer's rating"), said  # fmt: skip
