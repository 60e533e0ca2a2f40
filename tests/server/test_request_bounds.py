"""Every text that reaches the model or the database is bounded by study.toml (issue 24, item
4): [session] max_request_bytes caps a whole request, [suggestions] prompt_chars the document a
Tab request sends the model, [chat] history_chars the conversation sent for a reply."""

from __future__ import annotations

import orjson
from sqlalchemy import func, select

from study import config
from study.server import create_app
from study.store import reading
from study.store.db import events
from tests.chat.flow import choose_intent, prewrite, say, start_chat
from tests.server.flow import INIT_EVENT, start, to_writing


def _configured(folder, section: str, line: str, model_url: str = ""):
    path = folder / "study.toml"
    text = path.read_text().replace(f"[{section}]\n", f"[{section}]\n{line}\n", 1)
    if model_url:
        text = text.replace('endpoint = ""', f'endpoint = "{model_url}"', 1)
    path.write_text(text)
    return config.load(folder)


def test_a_request_past_max_request_bytes_is_a_413_naming_the_cap_and_nothing_is_stored(study_folder):
    app = create_app(_configured(study_folder, "session", "max_request_bytes = 200000"), suggestion_engine=object())
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id)
    event = {**INIT_EVENT, "seq": 0, "currentDoc": "x" * 90_000 + "\n", "currentCursor": 0}

    response = client.post(f"/api/sessions/{session_id}/events", json={"events": [event, {**event, "seq": 1}, {**event, "seq": 2}]})

    assert response.status_code == 413 and "200000" in response.json["error"]
    with reading(app.extensions["study.engine"]) as connection:
        assert connection.execute(select(func.count()).select_from(events)).scalar_one() == 0



def test_a_body_nested_hundreds_deep_is_refused_naming_the_nesting_and_nothing_is_stored(client):
    # orjson reads JSON nested up to 1,024 deep; wording what is wrong with a value nested about
    # that deep recursed past Python's limit, and anyone with a session id got a 500 for it.
    session_id = start(client)
    to_writing(client, session_id)
    deep = "[" * 1019 + "]" * 1019
    event = orjson.dumps({**INIT_EVENT, "seq": 0}).decode().replace('"currentSuggestions":[]', f'"currentSuggestions":{deep}')

    batch = client.post(f"/api/sessions/{session_id}/events", data=f'{{"events":[{event}]}}', content_type="application/json")
    finish = client.post(f"/s/{session_id}/writing/finish", data=f'{{"last_seq":0,"text":{deep}}}',
                         content_type="application/json")  # fmt: skip

    assert batch.status_code == 422 and "nest deeper than 64 levels" in batch.json["error"]
    assert finish.status_code == 400 and "nest deeper than 64 levels" in finish.json["error"]
    with reading(client.application.extensions["study.engine"]) as connection:
        assert connection.execute(select(func.count()).select_from(events)).scalar_one() == 0


def test_a_tab_request_sends_the_model_at_most_prompt_chars_of_the_document(study_folder, endpoint_factory):
    endpoint = endpoint_factory()
    study = _configured(study_folder, "suggestions", "prompt_chars = 2000", endpoint.url)
    client = create_app(study).test_client()
    session_id = start(client)
    to_writing(client, session_id)

    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "word " * 18_000})

    assert response.status_code == 200, response.json
    assert endpoint.calls >= 1 and max(endpoint.received) < 2000 + 2000  # the document's end, and the call's settings


def test_a_chat_reply_is_asked_with_at_most_history_chars_of_the_conversation(tmp_path, endpoint_factory):
    from study.cli import write_study_files

    endpoint = endpoint_factory()
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat")
    study = _configured(folder, "chat", "history_chars = 3000", endpoint.url)
    client = create_app(study).test_client()
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)

    for n in range(3):
        assert say(client, session_id, f"Message {n}: " + "long " * 500).status_code == 200

    # Three messages of 2,500 characters: the first call sends its message whole; the third
    # would send all three (7,500 and the replies) but sends the newest and what fits in 3,000.
    assert len(endpoint.received) == 3 and endpoint.received[0] > 2500
    assert endpoint.received[2] < 3000 + 2000  # the cap, and the call's settings and system prompt


def test_a_chat_arms_reply_is_asked_with_at_most_prompt_chars_of_the_conversation(tmp_path, endpoint_factory):
    from tests.chat.flow import chat_arm_study

    endpoint = endpoint_factory()
    folder = tmp_path / "study"
    chat_arm_study(folder, endpoint.url)
    client = create_app(_configured(folder, "suggestions", "prompt_chars = 3000")).test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)

    for n in range(3):
        sent = client.post(f"/api/sessions/{session_id}/assistant/messages",
                           json={"client_id": f"m-000000{n}", "content": f"Message {n}: " + "long " * 500})
        assert sent.status_code == 200, sent.json

    # As a chat study's [chat] history_chars: the third call sends the newest message and the
    # turns before it that fit in 3,000 characters, not all three messages and their replies.
    assert len(endpoint.received) == 3 and endpoint.received[0] > 2500
    assert endpoint.received[2] < 3000 + 2000  # the cap, and the call's settings and system prompt
