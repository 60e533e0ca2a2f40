"""Provenance (issue 20, item 4): a study configured for one model and served by another records,
in every log, export and report, the model that answered beside the one it asked for. Driven
end to end through a real `study lm serve --backend deterministic` process over HTTP."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import httpx
import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.chat_tables import chat_messages
from study.store.db import suggestion_requests
from tests.chat.flow import choose_intent, prewrite, say, start_chat
from tests.lm import served
from tests.server.flow import INIT_EVENT, start, to_writing

CONFIGURED = "Llama-3.1-8B-Instruct"  # what the chat study's init names; the endpoint runs another


@pytest.fixture(scope="module")
def lm_serve() -> str:
    with served.lm_serve("deterministic") as base_url:
        yield base_url


def test_the_endpoint_names_the_model_that_answered_not_the_one_asked_for(lm_serve):
    for route, body in (
        ("completions", {"model": "davinci-002", "prompt": "The door", "max_tokens": 5}),
        ("chat/completions", {"model": CONFIGURED, "messages": [{"role": "user", "content": "Hi"}]}),
    ):
        answer = httpx.post(f"{lm_serve}/{route}", json=body, timeout=10).json()
        assert answer["model"] == "deterministic", route
    # Asking about a model by name describes the one that would answer it.
    assert httpx.get(f"{lm_serve}/models/{CONFIGURED}", timeout=10).json()["id"] == "deterministic"
    assert [m["id"] for m in httpx.get(f"{lm_serve}/models", timeout=10).json()["data"]] == ["deterministic"]


def test_a_chat_study_records_the_answering_model_beside_the_configured_one(tmp_path, lm_serve):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat")
    study = config.load(folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=lm_serve))
    app = create_app(study)
    client = app.test_client()
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    assert say(client, session_id).status_code == 200
    condition = study.condition(_condition_of(app, session_id))
    with reading(app.extensions["study.engine"]) as connection:
        replies = connection.execute(chat_messages.select().where(chat_messages.c.role == "assistant")).mappings().all()
        calls = connection.execute(suggestion_requests.select()).mappings().all()
    app.extensions["study.engine"].dispose()
    assert [r["model"] for r in replies] == ["deterministic"]
    assert [(c["model"], json.loads(c["parameters"])["model"]) for c in calls] == [("deterministic", condition.model)]

    out = tmp_path / "chat-export"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "chat", "--out", str(out), "--all"])
    assert result.exit_code == 0, result.output
    (conversation,) = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert conversation["assistant"]["model"] == condition.model
    assert conversation["assistant"]["answered_models"] == ["deterministic"]
    assert [m["model"] for m in conversation["messages"] if m["role"] == "assistant"] == ["deterministic"]

    report = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(folder), "--out", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text()
    row = f"<tr><td>{condition.name}</td><td>{condition.model}</td><td>deterministic</td></tr>"
    assert row in html, html[html.find("configured model") - 200:][:800]


def test_tab_and_ghost_text_sessions_export_and_report_the_answering_model(tmp_path, lm_serve):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"}, paradigms=("L0", "L1"))
    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=lm_serve)))
    client = app.test_client()
    prompt = study.prompt("shapeshifter")
    arms = {}
    for number, (paradigm, route, body) in enumerate((
        ("L0", "suggestions", {"doc": prompt.text + " The door"}),
        ("L1", "proactive", {"doc": prompt.text + " The door", "idle_ms": 2000}),
    )):
        condition = next(c for c in study.conditions if c.genre == prompt.genre and c.paradigm == paradigm)
        session_id = start(client, access_code=f"writer-{number}")
        to_writing(client, session_id, prompt="shapeshifter")
        with writing(app.extensions["study.engine"]) as connection:
            session_store.update_session(connection, session_id, condition=condition.name)
        # A MindCopilot study's events each carry their paradigm (schemas/coauthor-proactive).
        init = {**INIT_EVENT, "seq": 0, "currentDoc": prompt.text, "proactive": {"paradigm": paradigm}}
        stored = client.post(f"/api/sessions/{session_id}/events", json={"events": [init]})
        assert stored.status_code == 200, stored.json
        answer = client.post(f"/api/sessions/{session_id}/{route}", json=body)
        assert answer.status_code == 200, answer.json
        finish = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0})
        assert finish.status_code == 200, finish.json
        arms[session_id] = condition
    app.extensions["study.engine"].dispose()

    out = tmp_path / "coauthor"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "coauthor", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "models.csv").open(newline="") as handle:
        rows = {r["session_id"]: r for r in csv.DictReader(handle)}
    assert {s: (r["condition"], r["model"], r["answered_model"]) for s, r in rows.items()} == {
        s: (c.name, c.model, "deterministic") for s, c in arms.items()
    }
    out = tmp_path / "proactive"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "sessions.csv").open(newline="") as handle:
        rows = {r["session_id"]: r for r in csv.DictReader(handle)}
    assert {s: (r["model"], r["answered_model"]) for s, r in rows.items()} == {
        s: (c.model, "deterministic") for s, c in arms.items()
    }

    for source in (folder, tmp_path / "coauthor", tmp_path / "proactive"):  # the study, and its exports
        report = tmp_path / f"report-{source.name}.html"
        result = CliRunner().invoke(main, ["report", str(source), "--out", str(report)])
        assert result.exit_code == 0, result.output
        html = report.read_text()
        for condition in arms.values():
            row = f"<tr><td>{condition.name}</td><td>{condition.model}</td><td>deterministic</td></tr>"
            assert row in html, source


def _condition_of(app, session_id: str) -> str:
    with reading(app.extensions["study.engine"]) as connection:
        return session_store.get(connection, session_id)["condition"]


def test_a_reply_that_names_no_model_is_not_credited_to_the_configured_one(tmp_path):
    # An OpenAI-compatible endpoint (a proxy, a home-made server) may leave out the reply's
    # `model`: which model answered is then unknown, and must not read as the configured one.
    import threading

    from flask import Flask, jsonify
    from werkzeug.serving import make_server

    endpoint = Flask(__name__)

    @endpoint.post("/v1/completions")
    def complete():
        choice = {"index": 0, "text": " It rained all night.", "finish_reason": "stop", "logprobs": None}
        return jsonify(id="cmpl-1", object="text_completion", created=0, choices=[choice])

    server = make_server("127.0.0.1", 0, endpoint, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    study = config.load(folder)
    url = f"http://127.0.0.1:{server.server_port}/v1"
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=url)))
    client = app.test_client()
    try:
        session_id = start(client, access_code="writer-1")
        to_writing(client, session_id, prompt="shapeshifter")
        assert client.post(f"/api/sessions/{session_id}/events", json={"events": [{**INIT_EVENT, "seq": 0}]}).status_code == 200
        answer = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "The door"})
        assert answer.status_code == 200, answer.json
        assert client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0}).status_code == 200
    finally:
        server.shutdown()
    app.extensions["study.engine"].dispose()

    out = tmp_path / "coauthor"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "coauthor", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "models.csv").open(newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert row["answered_model"] == "(not named by the endpoint)" and row["model"] != row["answered_model"]
