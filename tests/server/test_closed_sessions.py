"""A finished session is not served to whoever holds its id (issue 22, item 3), in every
paradigm: every GET route that takes a session id, read from the app's own url_map so a route
added later is walked too, answers 409 (an API) or leads to the session's current step (a page)
once the participant has left the writing or the chat, and no answer carries the text."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from study.server import create_app
from study.store import reading
from study.store import surveys as survey_store
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 (fixtures)
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat
from tests.server.flow import INIT_EVENT, start, to_writing

SECRET = "Zanzibar-lighthouse-7731"  # in the text and the conversation; never in an answer


def session_gets(app) -> list[str]:
    """The GET routes that take a session id, as written in the url_map."""
    rules = [r for r in app.url_map.iter_rules() if "session_id" in r.arguments and "GET" in r.methods]
    for rule in rules:
        assert rule.arguments == {"session_id"}, (
            f"{rule.rule} takes more than a session id: teach this walk what to send it"
        )
    return sorted(rule.rule for rule in rules)


def assert_closed(client, session_id: str, stage: str) -> list[str]:
    """Every session GET of the app: an API answers 409 with only an error, a page answers or
    redirects to the session's current step; nothing carries SECRET."""
    walked = []
    for rule in session_gets(client.application):
        url = rule.replace("<session_id>", session_id)
        response = client.get(url)
        body = response.get_data(as_text=True)
        assert SECRET not in body, f"{url} (session at '{stage}') serves the session's text"
        if rule.startswith("/api/"):
            assert response.status_code == 409, f"{url} (session at '{stage}'): {response.status_code} {body[:200]}"
            assert set(response.json) == {"error"} and stage in response.json["error"]
        elif url != f"/s/{session_id}/{stage}":
            assert response.status_code == 302, f"{url} (session at '{stage}'): {response.status_code}"
            assert response.location == f"/s/{session_id}/{stage}", url
        else:
            assert response.status_code == 200, url
        walked.append(rule)
    return walked


def _writing_session(client, paradigm: str) -> str:
    session_id = start(client, access_code="closed-1")
    to_writing(client, session_id)
    doc = f"Prompt. {SECRET}\n"
    event = {**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc) - 1}
    if paradigm != "L0":
        event["proactive"] = {"paradigm": paradigm}  # every event of a proactive session carries it
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": [event]}).status_code == 200
    assert SECRET in client.get(f"/api/sessions/{session_id}/state").json["doc"]  # served while writing
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": doc})
    assert response.status_code == 200, response.json
    return session_id


@pytest.mark.parametrize("paradigm", ["L0", "L2"])
def test_a_finished_writing_session_serves_nothing_at_any_session_route(study, model_url, paradigm):
    conditions = tuple(replace(c, paradigm=paradigm, mode="chat" if paradigm != "L0" else c.mode)
                       for c in study.conditions)  # fmt: skip
    app = create_app(replace(study, conditions=conditions, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    session_id = _writing_session(client, paradigm)
    walked = assert_closed(client, session_id, "evaluation")
    assert "/api/sessions/<session_id>/state" in walked and "/s/<session_id>/writing" in walked
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    assert_closed(client, session_id, "complete")


def _chat_session(client) -> str:
    session_id = start_chat(client, access_code="closed-chat")
    choose_intent(client, session_id)
    prewrite(client, session_id)
    for exchange in range(1, 9):
        response = say(client, session_id, f"Exchange {exchange}: keep {SECRET} in the text.")
        assert response.status_code == 200, response.json
        if exchange % 3 == 0:
            assert rate(client, session_id, exchange).status_code == 200
    document = f"My story about {SECRET}."
    insert = {"seq": 0, "eventName": "text-insert", "eventSource": "user", "eventTimestamp": 1_700_000_000_000,
              "textDelta": {"ops": [{"insert": document}]}}  # fmt: skip
    assert client.post(f"/api/sessions/{session_id}/chat/events", json={"events": [insert]}).status_code == 200
    state = client.get(f"/api/sessions/{session_id}/chat/state").json
    assert SECRET in state["document"] and SECRET in json.dumps(state["messages"])  # served while chatting
    response = client.post(f"/s/{session_id}/chat/finish", json={"last_seq": 0, "pending": 0, "document": document})
    assert response.status_code == 200, response.json
    return session_id


def test_a_finished_conversation_serves_nothing_at_any_session_route(chat_client):
    session_id = _chat_session(chat_client)
    walked = assert_closed(chat_client, session_id, "survey")
    assert "/api/sessions/<session_id>/chat/state" in walked and "/s/<session_id>/chat" in walked
    final = {"strengths": "It asked good questions.", "weaknesses": "Some replies were generic.",
             "end_reason": "I found the AI writing assistant not helpful.", "interaction_rating": "8", "document_rating": "9"}  # fmt: skip
    assert chat_client.post(f"/s/{session_id}/survey", data=final).location == f"/s/{session_id}/complete"
    assert_closed(chat_client, session_id, "complete")


def test_the_walk_covers_every_paradigms_session_routes(chat_app):
    # The chat study's app registers the writing, proactive and chat routes alike.
    assert {
        "/api/sessions/<session_id>/state", "/api/sessions/<session_id>/chat/state",
        "/s/<session_id>/writing", "/s/<session_id>/chat", "/s/<session_id>/survey",
        "/s/<session_id>/presurvey", "/s/<session_id>/complete",
    } <= set(session_gets(chat_app))  # fmt: skip


def test_a_rating_after_the_chat_is_refused_and_not_exported(chat_client, chat_app):
    session_id = start_chat(chat_client, access_code="late-rater")
    choose_intent(chat_client, session_id)
    prewrite(chat_client, session_id)
    for exchange in range(1, 10):
        assert say(chat_client, session_id, f"Message {exchange}.").status_code == 200
        if exchange in (3, 6):
            assert rate(chat_client, session_id, exchange).status_code == 200
    # The rating due after exchange 9 is skipped by finishing ([chat] rating_before_finish = false).
    response = chat_client.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "pending": 0, "document": "d"})
    assert response.status_code == 200, response.json
    late = rate(chat_client, session_id, 9)
    assert late.status_code == 409 and late.json["error"] == "session is at stage 'survey' and takes no new ratings"
    assert rate(chat_client, session_id, 6, value=2).json == {"saved": True, "duplicate": True}  # a resend
    with reading(chat_app.extensions["study.engine"]) as connection:
        stored = {(r["survey"], r["occasion"]): r["answers"] for r in survey_store.for_session(connection, session_id)}
    assert set(stored) == {("periodic", 3), ("periodic", 6)} and stored[("periodic", 6)] == {"periodic_rating": 7}


def test_rating_before_finish_asks_the_last_rating_first(chat_study):
    study = replace(chat_study, chat=replace(chat_study.chat, rating_before_finish=True))
    client = create_app(study).test_client()
    session_id = start_chat(client, access_code="strict-rater")
    choose_intent(client, session_id)
    prewrite(client, session_id)
    for exchange in range(1, 10):
        assert say(client, session_id, f"Message {exchange}.").status_code == 200
        if exchange in (3, 6):
            assert rate(client, session_id, exchange).status_code == 200
    finish = {"last_seq": -1, "pending": 0, "document": "d"}
    refused = client.post(f"/s/{session_id}/chat/finish", json=finish)
    assert refused.status_code == 409 and refused.json["owed"] == [{"survey": "periodic", "occasion": 9}]
    assert rate(client, session_id, 9).status_code == 200
    assert client.post(f"/s/{session_id}/chat/finish", json=finish).json["next"] == f"/s/{session_id}/survey"
