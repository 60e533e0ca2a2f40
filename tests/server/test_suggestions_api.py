"""The editor's suggestion API, against the real local model endpoint over HTTP."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import replace

import pytest
from sqlalchemy import select

from study.lm.backends import DeterministicBackend
from study.lm.server import serve_in_thread
from study.server import create_app
from study.store import reading, writing
from study.store.sessions import update_session
from study.store.db import suggestion_requests
from tests.server.flow import start, to_writing


def _app(study, **suggestion_settings):
    settings = replace(study.suggestions, **suggestion_settings)
    return create_app(replace(study, suggestions=settings))


def _writing_session(client, prompt="news", access_code="lab-1"):
    session_id = start(client, access_code=access_code)
    to_writing(client, session_id, prompt=prompt)
    return session_id


def _logged(app):
    with reading(app.extensions["study.engine"]) as connection:
        return [dict(r) for r in connection.execute(select(suggestion_requests)).mappings()]


def test_tab_gets_suggestions_with_the_conditions_parameters(study, model_url, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-never-shown")
    app = _app(study, endpoint=model_url)
    client = app.test_client()
    session_id = _writing_session(client)
    doc = study.prompt("news").text + " I think"
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": doc})

    assert response.status_code == 200, response.json
    suggestions = response.json["suggestions"]
    assert 1 <= len(suggestions) <= 5
    for i, item in enumerate(suggestions):
        assert set(item) == {"index", "original", "trimmed", "probability"}
        assert item["index"] == i and item["trimmed"] == item["original"].strip()
    body = response.get_data(as_text=True)
    assert "sk-secret-never-shown" not in body and "davinci" not in body
    assert "writing assistant" not in body  # no hidden prompt text

    (logged,) = _logged(app)
    assert logged["session_id"] == session_id
    assert logged["condition"] == "argumentative-low"
    assert json.loads(logged["parameters"])["temperature"] == 0.2
    assert json.loads(logged["parameters"])["frequency_penalty"] == 0.5
    assert len(json.loads(logged["raw"])) == 5  # n = 5 raw outputs kept, before filtering
    assert json.loads(logged["suggestions"]) == suggestions
    assert logged["latency_ms"] > 0 and logged["error"] is None


def test_suggestions_are_rate_limited_per_session(study, model_url):
    app = _app(study, endpoint=model_url, max_requests_per_minute=3)
    client = app.test_client()
    session_id = _writing_session(client)
    statuses = [
        client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"}).status_code
        for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
    assert "at most 3 per minute" in response.json["error"]
    other = _writing_session(client, access_code="lab-2")
    assert client.post(f"/api/sessions/{other}/suggestions", json={"doc": "x"}).status_code == 200


def test_an_unreachable_endpoint_is_a_clear_failure(study):
    app = _app(study, endpoint="http://127.0.0.1:9/v1", timeout_seconds=2)
    client = app.test_client()
    session_id = _writing_session(client)
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
    assert response.status_code == 502
    # The writer reads a calm sentence; the reason, with the endpoint, is the researcher's.
    assert response.json["error"] == "suggestions are not available right now"
    assert "127.0.0.1:9" not in response.get_data(as_text=True)
    assert "cannot reach the model endpoint at http://127.0.0.1:9/v1" in _logged(app)[0]["error"]


def test_a_slow_endpoint_times_out_instead_of_hanging(study):
    base_url, stop = serve_in_thread(DeterministicBackend(delay=5))
    try:
        app = _app(study, endpoint=base_url, timeout_seconds=0.5)
        client = app.test_client()
        session_id = _writing_session(client)
        began = time.monotonic()
        response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
        assert time.monotonic() - began < 3
        assert response.status_code == 504
        assert response.json["error"] == "suggestions are not available right now"
        assert "within 0.5 s" in _logged(app)[0]["error"]
    finally:
        stop()


@pytest.fixture
def trickling_endpoint():
    """An endpoint that answers at once, then sends its body a space at a time, 10 a second, for
    10 s (a proxy's keep-alive before an answer that never comes), or until the client leaves."""
    listener = socket.create_server(("127.0.0.1", 0))
    stopped = threading.Event()

    def answer():
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(100):
                if stopped.wait(0.1):
                    return
                try:
                    connection.sendall(b" ")
                except OSError:  # the server gave up on it
                    return

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stopped.set()
    thread.join(timeout=5)
    listener.close()


def test_an_endpoint_that_trickles_its_answer_times_out_instead_of_holding_the_slot(study, trickling_endpoint):
    # Each read gets a byte well within the time limit; the answer as a whole never comes.
    app = _app(study, endpoint=trickling_endpoint, timeout_seconds=0.5)
    client = app.test_client()
    session_id = _writing_session(client)
    began = time.monotonic()
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
    assert time.monotonic() - began < 3
    assert response.status_code == 504
    assert response.json["error"] == "suggestions are not available right now"
    assert "within 0.5 s" in _logged(app)[0]["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [({"text": "x"}, "string 'doc'"), ({"doc": "x", "on_screen": "y"}, "on_screen: must be a list")],
)
def test_bad_requests_name_the_field(study, model_url, body, message):
    client = _app(study, endpoint=model_url).test_client()
    session_id = _writing_session(client)
    response = client.post(f"/api/sessions/{session_id}/suggestions", json=body)
    assert response.status_code == 400 and message in response.json["error"]


def test_no_suggestions_outside_the_editor(study, model_url):
    client = _app(study, endpoint=model_url).test_client()
    session_id = start(client)
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "x"})
    assert response.status_code == 409


def test_a_session_finished_at_another_worker_gets_no_more_suggestions(study, model_url):
    # This worker remembers the session writing after its first suggestion and does not read it
    # again; another worker (here: the database directly) moves it on. The next suggestion is
    # refused before the model is asked, and nothing is recorded for it.
    app = _app(study, endpoint=model_url)
    client = app.test_client()
    session_id = _writing_session(client)
    doc = study.prompt("news").text + " I think"
    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": doc}).status_code == 200
    with writing(app.extensions["study.engine"]) as connection:
        update_session(connection, session_id, stage="survey")

    for _ in range(2):  # remembered, then read afresh
        response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": doc})
        assert response.status_code == 409, response.json
        assert "writing" in response.json["error"]
    assert len(_logged(app)) == 1


def test_without_an_endpoint_the_standard_openai_variables_apply(study, monkeypatch):
    import threading

    from werkzeug.serving import make_server

    from study.lm.server import create_app as create_model_app

    seen = []
    model_app = create_model_app(DeterministicBackend())

    def recording(environ, start_response):  # the endpoint, noting what each request carried
        seen.append((environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION")))
        return model_app(environ, start_response)

    server = make_server("127.0.0.1", 0, recording, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.port}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
        app = _app(study, endpoint="")
        client = app.test_client()
        session_id = _writing_session(client)
        response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
        assert response.status_code == 200, response.json
        assert seen == [("/v1/completions", "Bearer sk-from-the-environment")]
        assert "sk-from-the-environment" not in response.get_data(as_text=True)
    finally:
        server.shutdown()
