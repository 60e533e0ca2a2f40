"""The workspace's home page when nothing waits for the account's rating: it says so, and points
a researcher to the outcomes and to the submissions awaiting their adjudication."""

from __future__ import annotations

import re

from tests.review.conftest import log_in
from tests.review.test_web import next_submission, submitted, team  # noqa: F401  (fixtures)


def notice(page: str) -> str:
    """The home page's notice as a browser lays it out: no tags, one space between words."""
    found = re.search(r'<p class="notice" data-testid="nothing-to-rate">(.*?)</p>', page, re.S)
    assert found, page
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())


def rate_everything(client, scores) -> None:
    for score in scores:
        submission_id = next_submission(client)
        rated = client.post(
            f"/review/s/{submission_id}/rating", data={"score": str(score), "csrf_token": client.csrf}
        )
        assert rated.status_code == 302


def test_a_researcher_with_nothing_to_rate_is_pointed_to_outcomes_and_adjudication(
    workspace, team, submitted
):
    """Ana and Ben give both rateable submissions their two ratings, and disagree on one: Rita,
    a researcher who rates nothing, is told there is nothing for her to rate and where to go."""
    ana, ben, rita = log_in(workspace, "ana"), log_in(workspace, "ben"), log_in(workspace, "rita")
    rate_everything(ana, (5, 2))
    rate_everything(ben, (3, 2))

    page = rita.get("/review/").get_data(as_text=True)
    assert notice(page) == (
        "Nothing to rate for now: no submission is waiting for your rating. New submissions join "
        "as writers finish; open this page again later to see them."
    )
    assert "more could come your way" not in page and 'data-testid="start"' not in page
    adjudicate = re.search(r'<a href="([^"]+)" data-testid="to-adjudicate">([^<]+)</a>', page)
    assert adjudicate.group(2) == "1 submission awaits your adjudication"
    listed = rita.get(adjudicate.group(1).replace("&amp;", "&")).get_data(as_text=True)
    disputed = re.findall(r'<tr class="status-([a-z-]+)">', listed)
    assert disputed == ["needs-adjudication"]  # the link lists exactly the one to decide
    assert re.search(r'<a href="/review/results">Outcomes &amp; agreement</a>', page.split("<main")[1])

    submission_id = re.search(r'<a href="/review/s/([^/"]+)/adjudicate"', listed).group(1)
    decided = rita.post(
        f"/review/s/{submission_id}/decision", data={"score": "4", "csrf_token": rita.csrf}
    )
    assert decided.status_code == 302
    page = rita.get("/review/").get_data(as_text=True)
    assert 'data-testid="to-adjudicate"' not in page  # nothing awaits her now
    assert "Outcomes &amp; agreement</a>: where every submission stands" in page


def test_a_reviewer_whose_queue_is_done_is_told_their_part_is_done(workspace, team, submitted):
    ana = log_in(workspace, "ana")
    rate_everything(ana, (4, 4))

    page = ana.get("/review/").get_data(as_text=True)
    assert notice(page) == (
        "Nothing more to rate for now: your part is done. You rated 2 submissions, and every "
        "other one has its ratings or is waiting for other reviewers. Thank you! New "
        "submissions join as writers finish; open this page again later to see them."
    )
    assert 'data-testid="start"' not in page and "more could come your way" not in page
    assert 'data-testid="researcher-next"' not in page and "adjudication" not in page
    assert "Rated by you" in page  # what she rated stays listed


def test_a_reviewer_before_any_submission_is_told_nothing_waits_yet(workspace, team):
    page = log_in(workspace, "ben").get("/review/").get_data(as_text=True)
    assert notice(page).startswith(
        "Nothing to rate for now: no submission is waiting for your rating. New submissions join"
    )
    assert "your part is done" not in page and 'data-testid="start"' not in page
