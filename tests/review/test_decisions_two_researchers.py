"""Two researchers adjudicating one submission: a decision from a page opened before the other
researcher decided is refused (409) with the decision stored now, and the researcher's note is
kept; deciding again from the reloaded page replaces it knowingly."""

from __future__ import annotations

import re
from html import unescape

from study.review import decisions
from study.store import reading
from tests.review.conftest import add_reviewer, log_in
from tests.review.test_web import next_submission, submitted, team  # noqa: F401  (fixtures)


def decide(client, submission_id: str, page: str, score: int, note: str):
    """The decision form as a browser sends it, with the page's hidden fields."""
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return client.post(
        f"/review/s/{submission_id}/decision", data={**hidden, "score": str(score), "note": note}
    )


def test_a_decision_from_a_page_opened_before_another_researchers_is_refused(
    workspace, engine, team, submitted
):
    add_reviewer(engine, "ruth", role="researcher")
    ana, rita, ruth = log_in(workspace, "ana"), log_in(workspace, "rita"), log_in(workspace, "ruth")
    submission_id = next_submission(ana)
    url = f"/review/s/{submission_id}/adjudicate"
    rita_page, ruth_page = rita.get(url).get_data(as_text=True), ruth.get(url).get_data(as_text=True)

    assert decide(rita, submission_id, rita_page, 5, "A real ending.").status_code == 302
    refused = decide(ruth, submission_id, ruth_page, 2, "Barely used the AI.")

    assert refused.status_code == 409
    page = unescape(refused.get_data(as_text=True))
    assert 'rita decided this submission 5 with the note "A real ending." after this page' in page
    assert ">Barely used the AI.</textarea>" in page  # ruth's note, not lost
    with reading(engine) as connection:
        assert decisions.adjudication(connection, submission_id)["score"] == 5

    # Having read rita's decision, ruth decides again from the page she was shown.
    assert decide(ruth, submission_id, page, 2, "Barely used the AI.").status_code == 302
    with reading(engine) as connection:
        assert decisions.adjudication(connection, submission_id)["score"] == 2
