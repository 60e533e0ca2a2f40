"""The chat page's log and finish hold against hostile input as the writing editor's do
(issue 10, items 1 and 4): a storage quota per session, and a finish whose `last_seq` is
bounded by it, its gaps counted in SQL."""

from __future__ import annotations

import time
from dataclasses import replace

from study.server import create_app
from study.store import reading
from study.store import sessions as session_store
from tests.chat.flow import choose_intent, prewrite, say, start_chat


def _event(seq: int, text: str = "Draft.") -> dict:
    if seq == 0:
        return {"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1_700_000_000_000}
    return {"seq": seq, "eventName": "text-insert", "eventSource": "user", "eventTimestamp": 1_700_000_000_000 + seq,
            "textDelta": {"ops": [{"insert": text}]}}  # fmt: skip


def _app(chat_study, **session):
    raw = {**chat_study.raw, "session": {**chat_study.raw.get("session", {}), **session}}
    return create_app(replace(chat_study, raw=raw))


def _chatting(client) -> str:
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    return session_id


def _post(client, session_id, events):
    return client.post(f"/api/sessions/{session_id}/chat/events", json={"events": events})


def test_a_session_stores_no_more_chat_events_than_its_quota(chat_study):
    client = _app(chat_study, max_events=3).test_client()
    session_id = _chatting(client)

    assert _post(client, session_id, [_event(0), _event(1), _event(2)]).status_code == 200
    refused = _post(client, session_id, [_event(3)])
    assert refused.status_code == 422 and "at most 3" in refused.json["error"]
    # What is stored is still acknowledged when the page resends it.
    again = _post(client, session_id, [_event(1), _event(2)])
    assert again.status_code == 200 and again.json["acked"] == [1, 2]


def test_a_session_stores_no_more_chat_event_bytes_than_its_quota(chat_study):
    client = _app(chat_study, max_bytes=2_000).test_client()
    session_id = _chatting(client)

    assert _post(client, session_id, [_event(0), _event(1, "x" * 1_000)]).status_code == 200
    refused = _post(client, session_id, [_event(2, "y" * 1_000)])
    assert refused.status_code == 422 and "2000" in refused.json["error"]


def test_a_huge_last_seq_on_chat_finish_is_refused_at_once(chat_client):
    session_id = _chatting(chat_client)
    began = time.monotonic()
    response = chat_client.post(
        f"/s/{session_id}/chat/finish", json={"last_seq": 10**12, "pending": 0, "document": "d"}
    )
    assert response.status_code == 400 and "'last_seq' must be between -1 and 19999" in response.json["error"]
    assert time.monotonic() - began < 1.0


def test_chat_finish_records_every_missing_event(chat_study):
    app = create_app(replace(chat_study, chat=replace(chat_study.chat, min_exchanges=1)))
    client = app.test_client()
    session_id = _chatting(client)
    assert say(client, session_id).status_code == 200
    assert _post(client, session_id, [_event(0)]).status_code == 200

    # The page numbered 0..99 and lost 1..99 with its storage (pending 0): the gap is recorded.
    response = client.post(f"/s/{session_id}/chat/finish", json={"last_seq": 99, "pending": 0, "document": "d"})

    assert response.status_code == 200, response.json
    with reading(app.extensions["study.engine"]) as connection:
        assert session_store.get(connection, session_id)["missing_events"] == 99
