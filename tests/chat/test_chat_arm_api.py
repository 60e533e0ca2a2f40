"""The chat arm's panel API (study.paradigms.chat.arm_api) through the Flask test client, against
a real model endpoint over HTTP: a message is stored before the model is asked and its reply
before the participant is answered; a message whose reply failed or was not asked for is kept,
named by the conversation (pending_client_id) and by the refusal of any other message, and the
same client_id gets it answered, once; an answered client_id gets its stored reply again."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from study.paradigms.chat import store as chat_store
from study.server import create_app
from study.server.model_calls import NO_OUTCOME
from study.store import reading, writing
from study.store.db import suggestion_requests
from study.store.sessions import update_session
from tests.chat.flow import chat_arm_study
from tests.server.flow import start, to_writing


@pytest.fixture
def endpoint(endpoint_factory):
    return endpoint_factory()


@pytest.fixture
def app(tmp_path, endpoint):
    return create_app(chat_arm_study(tmp_path / "study", endpoint.url))


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def session_id(client) -> str:
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)
    return session_id


def _send(client, session_id: str, client_id: str, content: str = "Give me an opening line."):
    return client.post(f"/api/sessions/{session_id}/assistant/messages", json={"client_id": client_id, "content": content})


def _history(client, session_id: str) -> dict:
    response = client.get(f"/api/sessions/{session_id}/assistant/messages")
    assert response.status_code == 200, response.json
    return response.json


def _stored(app, session_id: str) -> list[dict]:
    with reading(app.extensions["study.engine"]) as connection:
        return chat_store.messages(connection, session_id)


def _calls(app) -> list[dict]:
    with reading(app.extensions["study.engine"]) as connection:
        return [dict(r) for r in connection.execute(select(suggestion_requests)).mappings()]


def test_a_message_is_stored_before_the_model_is_asked_and_its_reply_before_the_answer(app, client, session_id, endpoint):
    stored_when_asked = []
    endpoint.on_call = lambda: stored_when_asked.append([(m["role"], m["content"]) for m in _stored(app, session_id)])

    sent = _send(client, session_id, "m-0000001", "  Give me an opening line.  ")
    assert sent.status_code == 200, sent.json
    assert stored_when_asked == [[("user", "Give me an opening line.")]]
    assert sent.json["user"] == {"seq": 0, "role": "user", "content": "Give me an opening line."}
    assert sent.json["assistant"]["seq"] == 1 and sent.json["exchanges"] == 1 and sent.json["owed"] == []
    stored = _stored(app, session_id)
    assert [(m["seq"], m["role"], m["client_id"]) for m in stored] == [(0, "user", "m-0000001"), (1, "assistant", None)]
    assert stored[1]["content"] == sent.json["assistant"]["content"] and stored[1]["model"]
    [call] = _calls(app)
    assert call["error"] is None and call["suggestions"] != "[]"  # the model call's row is settled


def test_the_conversation_goes_on_with_the_whole_history_sent_to_the_model(app, client, session_id, endpoint):
    for n in range(4):
        sent = _send(client, session_id, f"m-000000{n}", f"Question {n}?")
        assert sent.status_code == 200, sent.json
        assert sent.json["user"]["seq"] == 2 * n and sent.json["assistant"]["seq"] == 2 * n + 1
        assert sent.json["exchanges"] == n + 1
    # Each call carries the conversation so far: the requests grow.
    assert endpoint.calls == 4 and endpoint.received == sorted(endpoint.received)
    history = _history(client, session_id)
    assert [m["seq"] for m in history["messages"]] == list(range(8)) and history["pending_client_id"] is None


def test_a_failed_reply_keeps_the_message_and_the_same_client_id_gets_the_reply(app, client, session_id, endpoint):
    endpoint.fail_next()
    failed = _send(client, session_id, "m-first01", "Are you there?")
    assert failed.status_code == 502
    assert failed.json["error"] == "it is not available right now; please try again in a moment"
    history = _history(client, session_id)
    assert [(m["role"], m["content"]) for m in history["messages"]] == [("user", "Are you there?")]
    assert history["pending_client_id"] == "m-first01"

    # Another message is refused while the first waits, names it, and stores nothing.
    refused = _send(client, session_id, "m-second1", "Hello?")
    assert refused.status_code == 409 and refused.json["pending_client_id"] == "m-first01"
    assert [m["content"] for m in _stored(app, session_id)] == ["Are you there?"]
    assert endpoint.calls == 1

    again = _send(client, session_id, "m-first01", "Are you there?")
    assert again.status_code == 200, again.json
    assert again.json["user"] == {"seq": 0, "role": "user", "content": "Are you there?"}
    assert again.json["assistant"]["seq"] == 1 and again.json["exchanges"] == 1
    assert endpoint.calls == 2
    assert _history(client, session_id)["pending_client_id"] is None
    # The failed call and the answered one are both recorded, each with its outcome.
    calls = _calls(app)
    assert len(calls) == 2 and calls[0]["error"] != NO_OUTCOME and calls[0]["error"] is not None
    assert calls[1]["error"] is None

    # Now the next message is taken.
    after = _send(client, session_id, "m-second1", "Hello?")
    assert after.status_code == 200 and after.json["user"]["seq"] == 2 and after.json["exchanges"] == 2


def test_an_answered_client_id_gets_its_stored_reply_without_asking_the_model(app, client, session_id, endpoint):
    first = _send(client, session_id, "m-0000001", "One?")
    second = _send(client, session_id, "m-0000002", "Two?")
    assert first.status_code == second.status_code == 200
    again = _send(client, session_id, "m-0000001", "One?")
    assert again.status_code == 200 and endpoint.calls == 2
    assert again.json["user"] == first.json["user"] and again.json["assistant"] == first.json["assistant"]
    assert again.json["exchanges"] == 2  # the conversation's exchanges, as it stands
    assert len(_stored(app, session_id)) == 4


def test_a_message_the_limit_refuses_is_kept_and_asked_once_the_limit_allows(app, client, session_id, endpoint):
    limit = app.extensions["study.limits"].model_calls_per_minute
    with writing(app.extensions["study.engine"]) as connection:  # the study has used its calls this minute
        for _ in range(limit):
            connection.execute(suggestion_requests.insert().values(
                session_id="x" * 32, created_at=time.time(), condition="chat", model="m",
                parameters="{}", raw="[]", suggestions="[]",
            ))  # fmt: skip
    refused = _send(client, session_id, "m-0000001", "Busy?")
    assert refused.status_code == 429 and endpoint.calls == 0
    assert _history(client, session_id)["pending_client_id"] == "m-0000001"
    with writing(app.extensions["study.engine"]) as connection:  # a minute later
        connection.execute(suggestion_requests.delete())
    answered = _send(client, session_id, "m-0000001", "Busy?")
    assert answered.status_code == 200 and endpoint.calls == 1


def test_a_reply_stored_meanwhile_is_kept_not_doubled(app, client, session_id, endpoint):
    """Two tabs asking for the same message at once: the reply stored first is the one kept."""
    endpoint.fail_next()
    assert _send(client, session_id, "m-0000001", "Hello?").status_code == 502

    def reply_from_the_other_tab():
        endpoint.on_call = None
        with writing(app.extensions["study.engine"]) as connection:
            chat_store.add_message(connection, session_id, "assistant", "The other tab's reply.")

    endpoint.on_call = reply_from_the_other_tab
    again = _send(client, session_id, "m-0000001", "Hello?")
    assert again.status_code == 200 and again.json["assistant"]["content"] == "The other tab's reply."
    assert [m["role"] for m in _stored(app, session_id)] == ["user", "assistant"]


def test_a_session_finished_in_another_tab_takes_no_more_messages(app, client, session_id, endpoint):
    # The worker remembers the session writing after its first message and does not read it
    # again; storing the next message finds it finished, stores nothing and asks no model.
    assert _send(client, session_id, "m-0000001", "Hello?").status_code == 200
    with writing(app.extensions["study.engine"]) as connection:  # the other tab finished
        update_session(connection, session_id, stage="survey")

    refused = _send(client, session_id, "m-0000002", "Still there?")

    assert refused.status_code == 409 and "survey" in refused.json["error"]
    assert [m["client_id"] for m in _stored(app, session_id)] == ["m-0000001", None]
    assert endpoint.calls == 1
