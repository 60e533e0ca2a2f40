"""A rating sent twice from one page (a quick double click of a score without JavaScript, a form
sent again) is saved once and shown saved; a different rating from that page, now older than the
stored one, is still refused as a change made elsewhere. A researcher's decision sent twice is
likewise recorded once."""

from __future__ import annotations

import re

from study.review import audit
from study.review import ratings as rating_store
from study.store import reading
from tests.review.conftest import log_in
from tests.review.test_web import next_submission, submitted, team  # noqa: F401  (fixtures)

# As a browser sends a textarea's line break, with the spaces around it that saving trims.
COMMENT = "  Strong ending.\r\nThe middle drags.  "


def test_the_same_rating_sent_twice_without_javascript_is_saved_once_and_shown_saved(
    workspace, engine, team, submitted
):
    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    url = f"/review/s/{submission_id}/rating"
    form = {"score": "4", "comment": COMMENT, "version": "0", "csrf_token": ana.csrf}

    first, second = ana.post(url, data=form), ana.post(url, data=form)  # the double click

    for answer in (first, second):
        assert answer.status_code == 302 and answer.location == f"/review/s/{submission_id}"
    page = ana.get(second.location).get_data(as_text=True)
    status = re.search(r'data-testid="rating-status"[^>]*>([^<]*)</p>', page).group(1)
    assert status == "Your rating: 4"
    assert "another tab" not in page
    assert 'id="rating-version" value="1"' in page
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
        logged = [e["action"] for e in audit.entries(connection, submission_id=submission_id)]
    assert (stored["score"], stored["comment"], stored["version"]) == (
        4, "Strong ending.\nThe middle drags.", 1,
    )  # fmt: skip  (line breaks stored as the comment box holds them)
    assert logged.count(audit.RATING_CREATE) == 1 and audit.RATING_EDIT not in logged


def test_a_changed_rating_sent_twice_is_saved_once_and_a_different_one_from_that_page_refused(
    workspace, engine, team, submitted
):
    """Ana rated 4 (version 1); the page then showing it changes it to 2, double-clicked. The
    repeat is the stored rating again. A 5 sent from that page (still showing version 1) is not
    what is stored: refused as before, with the stored rating."""
    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    url = f"/review/s/{submission_id}/rating"
    as_json = {"Accept": "application/json"}
    ana.post(url, data={"score": "4", "version": "0", "csrf_token": ana.csrf})
    changed = {"score": "2", "comment": "Weak middle.", "version": "1", "csrf_token": ana.csrf}

    assert ana.post(url, data=changed).status_code == 302
    again = ana.post(url, data=changed, headers=as_json)  # the same, as the page's script sends it
    assert again.status_code == 200
    assert (again.json["score"], again.json["comment"], again.json["version"]) == (2, "Weak middle.", 2)

    other = ana.post(url, data={**changed, "score": "5"})
    assert other.status_code == 409
    assert "changed in another tab" in other.get_data(as_text=True)
    other_json = ana.post(url, data={**changed, "score": "5"}, headers=as_json)
    assert other_json.status_code == 409 and other_json.json["current"]["version"] == 2
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
        logged = [e["action"] for e in audit.entries(connection, submission_id=submission_id)]
    assert (stored["score"], stored["comment"], stored["version"]) == (2, "Weak middle.", 2)
    assert logged.count(audit.RATING_EDIT) == 1


def test_a_comment_stored_with_crlf_before_is_the_stored_one_when_sent_again(workspace, engine, team, submitted):
    """A rating saved before comments were stored as the box holds them keeps the CRLF its
    browser sent. Sent again as it is (the page showing it, a double click), it is no change: no
    new version, no audit entry; a refusal answers with the comment as the box holds it, and
    the audit log keeps what was stored."""
    import time

    from study.store import writing
    from study.store.review_tables import review_ratings

    ana = log_in(workspace, "ana")
    submission_id = next_submission(ana)
    old = "Strong ending.\r\nThe middle drags."  # as an earlier version stored it
    with writing(engine) as connection:  # what that version's rate() wrote
        now = time.time()
        connection.execute(review_ratings.insert().values(
            submission_id=submission_id, reviewer_id=team["ana"]["reviewer_id"], score=4, comment=old,
            rated_at=now, updated_at=now, version=1))  # fmt: skip
        audit.record(connection, "ana", audit.RATING_CREATE, submission_id, score=4, comment=old)
    url = f"/review/s/{submission_id}/rating"
    form = {"score": "4", "comment": COMMENT, "version": "1", "csrf_token": ana.csrf}
    as_json = {"Accept": "application/json"}

    again = ana.post(url, data=form, headers=as_json)
    from_another_tab = ana.post(url, data={**form, "score": "5", "version": "0"}, headers=as_json)

    assert again.status_code == 200 and (again.json["version"], again.json["comment"]) == (
        1, "Strong ending.\nThe middle drags.")  # fmt: skip
    assert from_another_tab.status_code == 409
    assert from_another_tab.json["current"]["comment"] == "Strong ending.\nThe middle drags."
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
        logged = audit.entries(connection, submission_id=submission_id)
    assert (stored["score"], stored["version"]) == (4, 1)
    rated = [e for e in logged if e["action"].startswith("rating.")]
    assert [(e["action"], e["detail"]["comment"]) for e in rated] == [(audit.RATING_CREATE, old)]


def test_a_decision_sent_twice_is_logged_once_and_a_changed_one_again(workspace, engine, team, submitted):
    """The researcher's decide button double-clicked (or the form resent on reload): the audit
    log shows one decision, not a second "changed 4 to 4" the researcher never made."""
    ana, rita = log_in(workspace, "ana"), log_in(workspace, "rita")
    submission_id = next_submission(ana)
    url = f"/review/s/{submission_id}/decision"
    form = {"score": "4", "note": "  Has an ending.\r\nGood use of the AI.  ", "csrf_token": rita.csrf}

    for answer in (rita.post(url, data=form), rita.post(url, data=form)):  # the double click
        assert answer.status_code == 302
    rita.post(url, data={**form, "score": "3"})  # a real change of mind

    log = rita.get(f"/review/audit?submission={submission_id}").get_data(as_text=True)
    rows = [row for row in log.split("<tr") if "<td>decision.adjudicate</td>" in row]
    decisions = [re.search(r'class="detail">([^<]*)</td>', row).group(1) for row in rows]
    assert [re.search(r"previous_score=(\w+); score=(\d)", d).groups() for d in decisions] == [
        ("4", "3"), ("None", "4"),
    ]  # newest first
