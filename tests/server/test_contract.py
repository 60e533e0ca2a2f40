"""Every request is checked against its declared contract at the door (study.server.contract):
the rows of issue 24's table, each refused with a 4xx naming the field, nothing stored and no
model called."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from study.server import create_app
from study.store import reading
from study.store.chat_tables import chat_events
from study.store.db import suggestion_requests
from study.store.surveys import survey_responses
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 (fixtures)
from tests.chat.flow import choose_intent, prewrite, say, start_chat
from tests.server.flow import start, to_writing

# A number of 5,000 digits, as JSON text (Python will not even print such an int).
BIG = "9" * 5000


def _count(app, table) -> int:
    with reading(app.extensions["study.engine"]) as connection:
        return connection.execute(select(func.count()).select_from(table)).scalar_one()


def _chatting(client) -> str:
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    return session_id


def _chat_event(seq, **changes) -> dict:
    event = {"seq": seq, "eventName": "text-insert", "eventSource": "user",
             "eventTimestamp": 1_700_000_000_000, "textDelta": {"ops": [{"insert": "Draft."}]}}  # fmt: skip
    return {**event, **changes}


def _post_raw(client, url, text: str):
    return client.post(url, data=text, content_type="application/json")


# -- surveys ----------------------------------------------------------------------------------


def test_a_survey_page_answer_of_5000_digits_is_asked_again_not_a_500(client, app):
    from tests.server.flow import post_init

    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    assert client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "P.\n"}).status_code == 200
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    before = _count(app, survey_responses)

    answers = {"native_speaker": "Yes", "ownership": "9" * 5000, "satisfaction": "5", "reuse": "7"}
    response = client.post(f"/s/{session_id}/survey", data=answers)

    assert response.status_code == 200 and "Choose a point from 1 to 7." in response.get_data(as_text=True)
    assert _count(app, survey_responses) == before


@pytest.mark.parametrize(
    "value", [json.dumps(BIG), BIG, str(2**64), str(2**63), '[["x"]]', '{"a": 1}'],
    ids=["digits-as-text", "digits", "2^64", "2^63", "nested-list", "object"],
)
def test_an_in_chat_rating_of_a_huge_or_odd_value_is_refused(chat_client, chat_app, value):
    session_id = _chatting(chat_client)
    for n in range(3):
        assert say(chat_client, session_id, f"Message {n}").status_code == 200
    url = f"/api/sessions/{session_id}/surveys/periodic/3"

    response = _post_raw(chat_client, url, '{"answers": {"periodic_rating": %s}}' % value)

    assert response.status_code in (400, 422), response.json
    assert "periodic_rating" in response.json["error"] or "body is not valid JSON" in response.json["error"]
    assert _count(chat_app, survey_responses) == 0


def test_an_in_chat_rating_for_occasion_2_64_is_a_404_naming_it(chat_client, chat_app):
    session_id = _chatting(chat_client)

    response = chat_client.post(
        f"/api/sessions/{session_id}/surveys/periodic/{2**64}", json={"answers": {"periodic_rating": 5}}
    )

    assert response.status_code == 404 and "occasion" in response.json["error"]
    assert _count(chat_app, survey_responses) == 0


# -- the chat page's events -------------------------------------------------------------------


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"bold": value}
    return value


@pytest.mark.parametrize(
    ("event", "named"),
    [
        (_chat_event(1, eventTimestamp=2**63), "eventTimestamp"),
        (_chat_event(2**63), "seq"),
        (_chat_event(2**64), "seq"),
        (_chat_event(1, textDelta={"ops": [{"retain": 2**64}, {"insert": "x"}]}), "retain"),
        (_chat_event(1, textDelta={"ops": [{"insert": "x", "attributes": _nested(300)}]}), "attributes.bold"),
    ],
    ids=["timestamp-2^63", "seq-2^63", "seq-2^64", "retain-2^64", "nested-300"],
)
def test_chat_events_past_their_declared_bounds_are_a_422_and_not_stored(chat_client, chat_app, event, named):
    session_id = _chatting(chat_client)

    response = _post_raw(chat_client, f"/api/sessions/{session_id}/chat/events", json.dumps({"events": [event]}))

    assert response.status_code in (400, 422) and named in response.json["error"], response.json
    assert _count(chat_app, chat_events) == 0


def test_a_chat_event_timestamp_of_5000_digits_is_a_400(chat_client, chat_app):
    session_id = _chatting(chat_client)
    body = json.dumps({"events": [_chat_event(1, eventTimestamp=0)]}).replace('"eventTimestamp": 0', f'"eventTimestamp": {BIG}')

    response = _post_raw(chat_client, f"/api/sessions/{session_id}/chat/events", body)

    assert response.status_code == 400 and "body is not valid JSON" in response.json["error"]
    assert _count(chat_app, chat_events) == 0


# -- ghost text -------------------------------------------------------------------------------


def _proactive_app(study, model_url, paradigm):
    conditions = tuple(replace(c, paradigm=paradigm, mode="chat") for c in study.conditions)
    return create_app(replace(study, conditions=conditions, suggestions=replace(study.suggestions, endpoint=model_url)))


@pytest.mark.parametrize(
    "outcomes", [{"accepted": 1}, [["accepted"]], [{"outcome": "accepted"}], "accepted", [None]],
    ids=["object", "nested-list", "list-of-objects", "string", "null"],
)
def test_malformed_ghost_text_outcomes_are_a_400_and_no_model_is_called(study, model_url, outcomes):
    app = _proactive_app(study, model_url, "L2")
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id, prompt="news")

    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "abc", "outcomes": outcomes})

    assert response.status_code == 400 and "outcomes" in response.json["error"], response.json
    assert _count(app, suggestion_requests) == 0


def test_l2_rejected_texts_reach_the_model_and_the_database_bounded(study, model_url):
    app = _proactive_app(study, model_url, "L2")
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id, prompt="news")
    doc = "The news."
    history = [{"kind": "reject", "index": len(doc), "text": "r" * 45_000} for _ in range(20)]

    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "history": history})

    assert response.status_code == 200, response.json
    with reading(app.extensions["study.engine"]) as connection:
        (row,) = connection.execute(select(suggestion_requests)).mappings()
    context = json.loads(row["parameters"])["context"]
    # history_cap (20) texts of history_text_chars (1,000) each, and the document.
    assert context.count("<reject>") == 20 and len(context) <= len(doc) + 20 * (1000 + 20)
    assert len(row["parameters"]) + len(row["raw"]) < 40_000


# -- the door itself --------------------------------------------------------------------------


def test_a_json_body_nested_past_orjsons_limit_is_a_400(client):
    session_id = start(client)
    to_writing(client, session_id)

    response = _post_raw(client, f"/api/sessions/{session_id}/events", "[" * 100_000 + "]" * 100_000)

    assert response.status_code == 400 and "not valid JSON" in response.json["error"]


def test_an_unknown_field_is_named(client):
    session_id = start(client)
    to_writing(client, session_id)

    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "last_sequence": 3})

    assert response.status_code == 400 and "'last_sequence'" in response.json["error"]
