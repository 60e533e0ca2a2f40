"""No secret the server is configured with reaches a browser or the server's log: not the model
endpoint's API key (even from an endpoint that echoes it in its error, as OpenAI's 401 does),
the AWS secret, the Prolific token or the secret key. A participant's whole path is walked, a
model call that fails included, and every page, JSON answer, header and log line searched."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import pytest
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from study.server import create_app
from tests.server.flow import finish, post_init, start, to_writing

SECRETS = {
    "OPENAI_API_KEY": "sk-echo-Zq81mVb2Lx0Tq5Rn",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81mVb2Lx",
    "PROLIFIC_TOKEN": "prolific-token-Zq81mVb2Lx0Tq5Rn",
    "STUDY_SECRET_KEY": "flask-secret-Zq81mVb2Lx0Tq5Rn",
}

# An endpoint that answers every model call with an error naming the key it was sent.
echoing = Flask(__name__)


@echoing.post("/v1/<path:anything>")
def refuse(anything):
    key = request.headers.get("Authorization", "").removeprefix("Bearer ")
    return jsonify(error={"message": f"Your request with key {key} was rejected.", "type": "invalid_request_error"}), 400


@pytest.fixture
def echoing_endpoint():
    server = make_server("127.0.0.1", 0, echoing, threaded=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.port}/v1"
    server.shutdown()
    server.server_close()


def test_no_configured_secret_reaches_a_page_an_answer_or_the_log(study, echoing_endpoint, monkeypatch, caplog):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=echoing_endpoint)))
    client = app.test_client()

    answers = [client.get(url) for url in ("/", "/healthz", "/api/openapi.json", "/review/login", "/judge")]
    session_id = start(client)
    answers += [client.get(f"/s/{session_id}/{stage}") for stage in ("consent", "instructions", "prompt")]
    to_writing(client, session_id)
    post_init(client, session_id)
    answers.append(client.get(f"/s/{session_id}/writing"))
    answers.append(client.get(f"/api/sessions/{session_id}/state"))
    asked = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt.\nI think"})
    assert asked.status_code == 502, asked.data  # the model call failed, as the endpoint meant
    answers.append(asked)
    finish(client, session_id)
    answers.append(client.get(f"/s/{session_id}/complete"))

    sent = "\n".join(f"{a.headers}\n{a.get_data(as_text=True)}" for a in answers)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "[redacted] was rejected" in logged  # the failure was logged, with the key taken out
    for name, value in SECRETS.items():
        assert value not in sent, f"{name} reached the browser"
        assert value not in logged, f"{name} reached the log"
