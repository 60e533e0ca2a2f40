"""The workspace inside `study serve`, and rounds on the real participant's path."""

from __future__ import annotations

import pytest

from study.review import ratings as rating_store
from study.review import rounds, submissions
from study.store import reading, writing
from tests.review.conftest import add_reviewer, log_in, rated_by_two



@pytest.fixture
def serve_app(review_study, engine, model_url):
    """The app `study serve` runs (create_app), with the workspace under /review, and our own
    local model answering Tab."""
    from study.server import create_app
    from tests.mturk.conftest import with_model

    return create_app(with_model(review_study, model_url), engine=engine)


def test_study_serve_mounts_the_workspace_under_review(serve_app, engine):
    add_reviewer(engine, "ana")
    client = log_in(serve_app, "ana")
    assert "Your queue" in client.get("/review/").get_data(as_text=True)
    assert serve_app.test_client().get("/review/results").status_code == 302  # needs a login


def enter(client, code: str, round_name: str | None = None, another: bool = False):
    query = (
        f"/task?access_code={code}"
        + (f"&round={round_name}" if round_name else "")
        + ("&another=1" if another else "")
    )
    return client.get(query)


def finish(client, session_id: str, prompt: str = "shapeshifter") -> None:
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    client.post(f"/s/{session_id}/prompt", data={"prompt": prompt})
    events = [{"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1, "textDelta": "",
               "cursorRange": "", "currentDoc": "Prompt.\n", "currentCursor": 7, "currentSuggestions": [],
               "currentSuggestionIndex": 0, "currentHoverIndex": "", "currentN": "5", "currentMaxToken": "30",
               "currentTemperature": "0.3", "currentTopP": "1", "currentPresencePenalty": "0",
               "currentFrequencyPenalty": "0"}]  # fmt: skip
    events.append(
        {
            **events[0],
            "seq": 1,
            "eventName": "suggestion-get",
            "eventSource": "user",
            "eventTimestamp": 2,
        }
    )
    client.post(f"/api/sessions/{session_id}/events", json={"events": events})
    # The Tab press reaches the task server, whose own request record is what the rules count.
    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt.\n"}).status_code == 200
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": "Prompt.\n"})
    client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"})
    client.post(
        f"/s/{session_id}/survey",
        data={"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"},
    )


def test_the_qualification_round_offers_its_prompts_and_note_and_takes_a_writer_once(
    serve_app, review_study, engine
):
    client = serve_app.test_client()
    entered = enter(client, "lab-1", "qualification")
    session_id = entered.location.split("/")[2]
    with reading(engine) as connection:
        assert rounds.round_of(connection, review_study, session_id).name == "qualification"
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    assert "This is a qualification round" in client.get(f"/s/{session_id}/instructions").get_data(
        as_text=True
    )
    client.post(f"/s/{session_id}/instructions")
    page = client.get(f"/s/{session_id}/prompt").get_data(as_text=True)
    assert (
        'value="shapeshifter"' in page and 'value="screen"' in page and 'value="mana"' not in page
    )
    finish(client, session_id)
    again = enter(client, "lab-1", "qualification", another=True)
    assert again.status_code == 403 and "only once" in again.get_data(as_text=True)


def test_the_main_round_admits_writers_once_they_passed(serve_app, review_study, engine):
    client = serve_app.test_client()
    session_id = enter(client, "lab-2").location.split("/")[2]  # the default round
    finish(client, session_id)
    refused = enter(client, "lab-2", "main", another=True)
    assert refused.status_code == 403 and "passed the qualification round" in refused.get_data(
        as_text=True
    )
    reviewers = [add_reviewer(engine, name) for name in ("ana", "ben")]
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        for reviewer in reviewers:
            rating_store.rate(connection, submission_id, reviewer, 5, "", scores=(1, 2, 3, 4, 5))
    admitted = enter(client, "lab-2", "main", another=True)
    assert admitted.status_code == 302
    main_session = admitted.location.split("/")[2]
    client.post(f"/s/{main_session}/consent", data={"consent": "yes"})
    assert "qualification round" not in client.get(f"/s/{main_session}/instructions").get_data(
        as_text=True
    )
    client.post(f"/s/{main_session}/instructions")
    assert 'value="mana"' in client.get(f"/s/{main_session}/prompt").get_data(as_text=True)


def test_a_link_to_an_unknown_round_is_refused(serve_app):
    response = serve_app.test_client().get(
        "/task?workerId=A1X&assignmentId=AS1&hitId=H1&round=bonus"
    )
    assert response.status_code == 403 and "no round named" in response.get_data(as_text=True)


def test_a_lab_writer_s_main_round_link_enters_the_main_round_only_once_they_passed(
    serve_app, review_study, engine
):
    """The link the README gives (`/task?access_code=CODE&round=main`), with no `another=1`: the
    writer's finished qualification session is not shown again in place of the main round."""
    client = serve_app.test_client()
    for code in ("lab-pass", "lab-fail"):
        finish(client, enter(client, code, "qualification").location.split("/")[2])
    rated_by_two(engine, review_study, 5, 1)
    refused = enter(client, "lab-fail", "main")
    assert refused.status_code == 403
    said = refused.get_data(as_text=True)
    assert "passed the qualification round" in said
    assert "HIT" not in said and "Thank you for your interest" in said  # a lab writer has no HIT
    admitted = enter(client, "lab-pass", "main")
    assert admitted.status_code == 302 and admitted.location.endswith("/consent")
    main_session = admitted.location.split("/")[2]
    with reading(engine) as connection:
        assert rounds.round_of(connection, review_study, main_session).name == "main"
    assert enter(client, "lab-pass", "main").location == admitted.location  # resumed, not a third
