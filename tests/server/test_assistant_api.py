"""L0's assistant panel API and the Tab list as its own paradigm (issue 21, item 1), against the
real local model endpoint over HTTP: the panel answers only an L0 session run as the panel,
the Tab list only tab (or L0 run as the list), each exchange is stored like a suggestion, and a
log citing an answer this server never sent is refused."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from sqlalchemy import select

from study.server import create_app
from study.store import reading
from study.store.db import suggestion_requests
from tests.curation.conftest import record
from tests.curation.proactive_session import Script
from tests.server.flow import start, to_writing


def _app(study, model_url, paradigm, l0="assistant"):
    conditions = tuple(replace(c, paradigm=paradigm) for c in study.conditions)
    study = replace(study, conditions=conditions, proactive=replace(study.proactive, l0=l0),
                    suggestions=replace(study.suggestions, endpoint=model_url))  # fmt: skip
    return create_app(study)


def _writing(client, code="lab-1"):
    session_id = start(client, access_code=code)
    to_writing(client, session_id, prompt="news")
    return session_id


def _ask(client, session_id, request="Write two sentences about the news."):
    return client.post(f"/api/sessions/{session_id}/assistant", json={"request": request, "doc": "The news today"})


def test_the_panel_answers_completely_and_keeps_the_exchange(study, model_url):
    app = _app(study, model_url, "L0")
    client = app.test_client()
    session_id = _writing(client)
    response = _ask(client, session_id)
    assert response.status_code == 200, response.json
    assert set(response.json) == {"chatId", "response"} and response.json["response"].strip()
    with reading(app.extensions["study.engine"]) as connection:
        (row,) = connection.execute(select(suggestion_requests)).mappings().all()
    assert row["id"] == response.json["chatId"] and row["session_id"] == session_id
    parameters = json.loads(row["parameters"])
    assert parameters["request"] == "Write two sentences about the news." and parameters["paradigm"] == "L0"
    assert parameters["max_tokens"] == study.proactive.assistant_max_tokens
    assert json.loads(row["suggestions"])[0]["original"] == response.json["response"]
    # No Tab list in the paper's L0.
    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "The news"}).status_code == 409


def test_an_empty_request_is_refused_naming_the_field(study, model_url):
    client = _app(study, model_url, "L0").test_client()
    session_id = _writing(client)
    response = _ask(client, session_id, request="")
    assert response.status_code == 400 and "request" in response.json["error"]


@pytest.mark.parametrize("paradigm, l0", [("tab", "assistant"), ("L0", "tab"), ("L1", "assistant")])
def test_other_sessions_have_no_panel(study, model_url, paradigm, l0):
    client = _app(study, model_url, paradigm, l0).test_client()
    session_id = _writing(client)
    response = _ask(client, session_id)
    assert response.status_code == 409 and "no assistant panel" in response.json["error"]
    tab = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "The news"})
    assert tab.status_code == (409 if paradigm == "L1" else 200), tab.json


def _post(client, session_id, script):
    batch = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]
    return client.post(f"/api/sessions/{session_id}/events", json={"events": batch})


def _exchange(script: Script, chat_id: int, text: str) -> Script:
    script.add(record("chat-send"), text="Write two sentences about the news.")
    script.add(record("chat-receive", "api"), chatId=chat_id, text=text)
    return script


def test_a_log_citing_an_answer_never_sent_is_refused(study, model_url):
    client = _app(study, model_url, "L0").test_client()
    session_id = _writing(client)
    answer = _ask(client, session_id).json
    forged = _exchange(Script(paradigm="L0").type(" The news"), answer["chatId"], "Text the model never wrote.")
    response = _post(client, session_id, forged)
    assert response.status_code == 422 and "proactive.text" in response.json["error"]
    other = _exchange(Script(paradigm="L0").type(" The news"), answer["chatId"] + 1000, answer["response"])
    response = _post(client, session_id, other)
    assert response.status_code == 422 and "proactive.chatId" in response.json["error"]
    honest = _exchange(Script(paradigm="L0").type(" The news"), answer["chatId"], answer["response"])
    honest.edit(honest.end, insert=" " + answer["response"], paste=True, chatId=answer["chatId"])
    response = _post(client, session_id, honest)
    assert response.status_code == 200, response.json


def test_a_writer_past_50000_characters_can_still_ask_the_panel(study, model_url):
    # The editor takes a text of up to 99,999 characters; the panel took a document of at most
    # 50,000, and past them answered "doc: must have at most 50000 characters" to every request.
    client = _app(study, model_url, "L0").test_client()
    session_id = _writing(client)
    doc = "The rain fell on the town all night. " * 2000  # 74,000 characters
    response = client.post(f"/api/sessions/{session_id}/assistant", json={"request": "Go on.", "doc": doc})
    assert response.status_code == 200, response.json
    assert response.json["response"].strip()
