"""The model-call guards (study.server.model_calls) on the proactive ghost-text API and the chat
assistant, against a real model endpoint over HTTP (issue 10, items 9 and 15): a burst makes no
more model calls than the limits allow, the study-wide cap counts every kind of call, slow calls
hold a bounded share of threads, and a failing endpoint's address never reaches a participant."""

from __future__ import annotations

import json
import logging
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from sqlalchemy import select

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.paradigms.chat import store as chat_store
from study.store import reading
from study.store.db import suggestion_requests
from tests.chat.flow import choose_intent, prewrite, say, start_chat
from tests.server.flow import start, to_writing

CALM_PROACTIVE = "suggestions are not available right now"


def _nothing_listens() -> tuple[str, str]:
    """An endpoint address where nothing listens (every call fails), and its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    return f"http://127.0.0.1:{port}/v1", port


def _configured(folder: Path, endpoint_url: str, **suggestions) -> config.Study:
    """The study in `folder` with its endpoint and `[suggestions]` keys set in study.toml."""
    toml = folder / "study.toml"
    text = toml.read_text().replace('endpoint = ""', f'endpoint = "{endpoint_url}"', 1)
    for key, value in suggestions.items():
        text, found = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        if not found:
            text = text.replace("[suggestions]\n", f"[suggestions]\n{key} = {value}\n", 1)
    toml.write_text(text)
    return config.load(folder)


def _proactive_app(study_folder, endpoint_url: str, **suggestions):
    study = _configured(study_folder, endpoint_url, **suggestions)
    conditions = tuple(replace(c, paradigm="L1", mode="chat") for c in study.conditions)
    return create_app(replace(study, conditions=conditions))


def _writing_session(client, code: str = "lab-1") -> str:
    session_id = start(client, access_code=code)
    to_writing(client, session_id, prompt="news")
    return session_id


def _chat_app(tmp_path: Path, endpoint_url: str, **suggestions):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat")
    return create_app(_configured(folder, endpoint_url, **suggestions))


def _chatting(client, code: str = "chat-1") -> str:
    session_id = start_chat(client, access_code=code)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    return session_id


def _rows(app) -> list[dict]:
    with reading(app.extensions["study.engine"]) as connection:
        return [dict(r) for r in connection.execute(select(suggestion_requests)).mappings()]


def _proactive(app, session_id: str):
    return app.test_client().post(f"/api/sessions/{session_id}/proactive", json={"doc": "The news is"})


def test_a_burst_of_proactive_requests_makes_no_more_model_calls_than_the_limit(study_folder, endpoint_factory):
    endpoint = endpoint_factory(delay=0.3)
    app = _proactive_app(study_folder, endpoint.url, max_requests_per_minute=5, concurrent_requests=50)
    session_id = _writing_session(app.test_client())

    with ThreadPoolExecutor(20) as pool:
        statuses = list(pool.map(lambda _: _proactive(app, session_id).status_code, range(20)))

    assert statuses.count(200) == 5 and statuses.count(429) == 15
    assert endpoint.calls == 5
    assert len(_rows(app)) == 5


def test_a_burst_of_resent_chat_messages_makes_no_more_model_calls_than_the_limit(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    app = _chat_app(tmp_path, endpoint.url, max_requests_per_minute=3, concurrent_requests=50)
    session_id = _chatting(app.test_client())
    # One message sent from many tabs at once (or replayed by a script): each request finds it
    # stored without a reply and would ask the model. The model answers none until all twelve
    # have been decided: a request sent after a reply is stored gets that reply (200, no call),
    # which on a busy machine a late thread would otherwise see.
    endpoint.hold()
    with ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(lambda: say(app.test_client(), session_id, "Hello?", client_id="client-0001").status_code)
                   for _ in range(12)]
        deadline = time.monotonic() + 30
        while sum(f.done() for f in futures) < 9 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = [f.result() for f in futures if f.done()]
        endpoint.release()
        statuses = [f.result(timeout=60) for f in futures]

    assert endpoint.calls == 3
    assert refused == [429] * 9  # decided while the model had answered nothing
    assert statuses.count(429) == 9 and statuses.count(200) == 3
    with reading(app.extensions["study.engine"]) as connection:
        assert [m["role"] for m in chat_store.messages(connection, session_id)] == ["user", "assistant"]


def test_the_study_wide_cap_counts_chat_replies_and_proactive_suggestions(tmp_path, study_folder, endpoint_factory):
    endpoint = endpoint_factory()
    chat = _chat_app(tmp_path, endpoint.url, model_calls_per_minute=2)
    statuses = [say(chat.test_client(), _chatting(chat.test_client(), f"c{n}")).status_code for n in range(3)]
    assert statuses == [200, 200, 429] and endpoint.calls == 2

    proactive = _proactive_app(study_folder, endpoint.url, model_calls_per_minute=2)
    sessions = [_writing_session(proactive.test_client(), f"lab-{n}") for n in range(3)]
    assert [_proactive(proactive, s).status_code for s in sessions] == [200, 200, 429]
    assert endpoint.calls == 4


def test_slow_proactive_calls_hold_only_their_slots(study_folder, endpoint_factory):
    endpoint = endpoint_factory(delay=1.5)
    app = _proactive_app(study_folder, endpoint.url, concurrent_requests=1)
    sessions = [_writing_session(app.test_client(), f"lab-{n}") for n in range(4)]

    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(lambda s: _proactive(app, s), sessions))

    assert sorted(r.status_code for r in statuses) == [200, 503, 503, 503]
    assert endpoint.calls == 1
    assert all("busy" in r.json["error"] for r in statuses if r.status_code == 503)


def test_a_failing_endpoint_is_named_to_the_researcher_never_to_the_participant(tmp_path, study_folder, caplog):
    down, port = _nothing_listens()
    chat = _chat_app(tmp_path, down)
    proactive = _proactive_app(study_folder, down)

    with caplog.at_level(logging.WARNING, logger="study.server.model_calls"):
        replied = say(chat.test_client(), _chatting(chat.test_client()), "Hello?")
        ghost = _proactive(proactive, _writing_session(proactive.test_client()))

    assert replied.status_code == 502 and ghost.status_code == 502
    for answer in (replied, ghost):
        shown = answer.get_data(as_text=True)
        assert port not in shown and "endpoint" not in shown and "running" not in shown and "HTTP" not in shown
    assert ghost.json["error"] == CALM_PROACTIVE
    assert "not available right now" in replied.json["error"]
    # The reason, with the address, is in the log and the row `study status` summarises.
    for app in (chat, proactive):
        (row,) = _rows(app)
        assert "cannot reach" in row["error"] and port in row["error"]
    assert sum(port in record.getMessage() for record in caplog.records) == 2


def test_the_model_recorded_is_the_one_that_answered(tmp_path, study_folder, endpoint_factory):
    endpoint = endpoint_factory(answered_as="dated-model-2026-01-15")
    chat = _chat_app(tmp_path, endpoint.url)
    proactive = _proactive_app(study_folder, endpoint.url)

    assert say(chat.test_client(), _chatting(chat.test_client())).status_code == 200
    assert _proactive(proactive, _writing_session(proactive.test_client())).status_code == 200

    for app in (chat, proactive):
        (row,) = _rows(app)
        assert row["model"] == "dated-model-2026-01-15"
        assert json.loads(row["parameters"])["model"] != "dated-model-2026-01-15"  # what was asked for


def test_the_model_client_is_built_before_the_first_call_of_a_worker(study_folder):
    # `study serve` warms up in its master, before forking: a cold worker's first suggestion
    # spent 188 ms of CPU building the client and the sentence splitter's rules, its GIL held
    # while every writer's event batches waited (study.server.serving).
    from study import model_client
    from study.server import model_calls

    endpoint_url, _ = _nothing_listens()
    study = _configured(study_folder, endpoint_url)
    model_client.client.cache_clear()
    model_calls.warm_up(study)
    built = model_client.client.cache_info().misses
    client = create_app(study).test_client()
    session_id = _writing_session(client)

    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "It was late."})

    assert response.status_code == 502  # nothing listens there
    assert model_client.client.cache_info().misses == built, "the first call built a client of its own"
