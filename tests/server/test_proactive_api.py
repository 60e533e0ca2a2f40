"""The proactive suggestion API (L1-L3) against the real local model endpoint over HTTP."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

from flask import Flask, jsonify
from sqlalchemy import select
from werkzeug.serving import make_server

from study.lm.backends import DeterministicBackend, Generation
from study.lm.server import serve_in_thread
from study.paradigms.proactive import policy
from study.server import create_app
from study.store import reading
from study.store.db import suggestion_requests
from tests.server.flow import start, to_writing


def _app(study, model_url, paradigm):
    conditions = tuple(replace(c, paradigm=paradigm, mode="chat") for c in study.conditions)
    study = replace(study, conditions=conditions,
                    suggestions=replace(study.suggestions, endpoint=model_url))
    return create_app(study)


def _session(client):
    session_id = start(client, access_code="lab-1")
    to_writing(client, session_id, prompt="news")
    return session_id


def _stored(app):
    with reading(app.extensions["study.engine"]) as connection:
        return [dict(r) for r in connection.execute(select(suggestion_requests)).mappings()]


def test_l1_answers_one_short_suggestion_and_keeps_its_record(study, model_url):
    app = _app(study, model_url, "L1")
    client = app.test_client()
    session_id = _session(client)
    doc = "In my opinion, the news matters because"
    history = [{"kind": "reject", "index": 5, "text": " ignored in L1"}]
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "history": history, "idle_ms": 2000})
    assert response.status_code == 200, response.json
    answer = response.json
    text = answer["suggestion"]["original"]
    assert text.startswith(" ") and text.strip() and text.count(". ") == 0
    assert answer["stage"] is None and "strategy" not in answer  # the browser is not told "L1"
    (row,) = _stored(app)
    assert row["id"] == answer["suggestionId"]
    record = json.loads(row["parameters"])
    assert record["paradigm"] == "L1" and record["strategy"] == "L1" and record["idle_ms_used"] == 2000
    assert record["context"] == doc and "<reject>" not in record["context"]  # stateless
    assert json.loads(row["suggestions"])[0]["original"] == text


def test_l2_sends_the_marked_up_snapshot(study, model_url):
    app = _app(study, model_url, "L2")
    client = app.test_client()
    session_id = _session(client)
    doc = "The sky was grey. It rained."
    history = [{"kind": "accept", "index": 17, "length": 11}, {"kind": "reject", "index": 28, "text": " Birds sang."}]
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "history": history})
    assert response.status_code == 200, response.json
    (row,) = _stored(app)
    assert json.loads(row["parameters"])["context"] == (
        "The sky was grey.<accept> It rained.</accept><reject> Birds sang.</reject>")


def test_l3_plans_stage_strategy_threshold_and_length(study, model_url):
    app = _app(study, model_url, "L3")
    client = app.test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={
        "doc": "Short start.", "outcomes": ["rejected"] * 3, "kept_words": [2]})
    assert response.status_code == 200, response.json
    answer = response.json
    assert (answer["stage"], answer["idleMs"], answer["maxTokens"]) == ("early", 6000, 8)
    (row,) = _stored(app)
    assert json.loads(row["parameters"])["strategy"] == "L1"  # kept for the log, not sent


def test_l3_reads_the_writing_stage_from_the_writers_words_not_the_prompts(study, model_url):
    # The editor's text starts with the prompt (CoAuthor's layout); the stage is words written
    # against the target length, so a long prompt must not move a writer who has written two
    # words past the early stage.
    prompt = study.prompt("news").text.rstrip("\n")
    prompt_words = policy.word_count(prompt)
    study = replace(study, proactive=replace(study.proactive, target_words=2 * prompt_words))
    app = _app(study, model_url, "L3")
    client = app.test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": f"{prompt}\nI agree."})
    assert response.status_code == 200, response.json
    assert response.json["stage"] == "early"
    written = " ".join(["word"] * prompt_words)  # half the target: the middle stage
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": f"{prompt}\n{written}"})
    assert response.json["stage"] == "middle"


def test_a_long_run_of_rejections_waits_the_longest_threshold_and_settles_its_call(study, model_url):
    # As many rejections as a request may carry: the threshold stops growing at max_idle_ms,
    # and the model call is settled rather than left "no outcome recorded".
    app = _app(study, model_url, "L3")
    client = app.test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={
        "doc": "Short start.", "outcomes": ["rejected"] * 2000})
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert response.json["idleMs"] == study.proactive.max_idle_ms
    (row,) = _stored(app)
    assert row["error"] is None


def test_a_tab_condition_and_bad_bodies_are_refused_with_the_reason(study, model_url):
    client = _app(study, model_url, "L0").test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "x"})
    assert response.status_code == 409 and "do not come from ghost text" in response.json["error"]
    assert "L0" not in response.json["error"]

    client = _app(study, model_url, "L2").test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "abc", "history": [{"kind": "add", "index": 1, "length": 9}]})
    assert response.status_code == 400 and "history[0].length" in response.json["error"]
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "abc", "outcomes": ["maybe"]})
    assert response.status_code == 400 and "outcomes[0]" in response.json["error"]


def test_a_proactive_session_gets_no_tab_list_and_asks_no_model(study, model_url):
    app = _app(study, model_url, "L2")
    client = app.test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt."})
    assert response.status_code == 409 and "ghost text, not Tab" in response.json["error"]
    assert _stored(app) == []  # refused before any model call was recorded


def test_a_model_that_is_down_is_a_502_with_a_sentence(study):
    app = _app(study, "http://127.0.0.1:9/v1", "L1")
    client = app.test_client()
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "Hello there"})
    # The writer's page gets a calm line; the reason (with the address) stays with the researcher.
    assert response.status_code == 502 and response.json["error"] == "suggestions are not available right now"
    assert "cannot reach" in _stored(app)[0]["error"] and "127.0.0.1:9" in _stored(app)[0]["error"]


def test_an_answer_without_choices_is_named_a_malformed_response(study):
    # An endpoint that answers 200 with no choice (e.g. a content filter that withheld it).
    empty = Flask(__name__)

    @empty.post("/v1/chat/completions")
    def no_choices():
        return jsonify(id="x", object="chat.completion", model="m", choices=[])

    server = make_server("127.0.0.1", 0, empty, threaded=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        app = _app(study, f"http://127.0.0.1:{server.port}/v1", "L1")
        client = app.test_client()
        session_id = _session(client)
        response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "Hello there"})
    finally:
        server.shutdown()
        server.server_close()
    assert response.status_code == 502 and response.json["error"] == "suggestions are not available right now"
    error = _stored(app)[0]["error"]
    assert "sent a malformed response: its list of choices is empty" in error, error


class Says(DeterministicBackend):
    """A model whose every answer is `text`."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def generate(self, prompt: str, *, n: int = 1, **kwargs) -> list[Generation]:
        return [Generation(self.text, [-0.5], "stop", [self.text]) for _ in range(n)]


def _ghost_text(study, model_says: str, mode: str, doc: str) -> str:
    """The L1 ghost text for `doc` from a model in `mode` that answers `model_says`."""
    url, stop = serve_in_thread(Says(model_says))
    try:
        conditions = tuple(replace(c, paradigm="L1", mode=mode) for c in study.conditions)
        app = create_app(replace(study, conditions=conditions, suggestions=replace(study.suggestions, endpoint=url)))
        client = app.test_client()
        response = client.post(f"/api/sessions/{_session(client)}/proactive", json={"doc": doc})
    finally:
        stop()
    assert response.status_code == 200, response.json
    return response.json["suggestion"]["original"]


def test_ghost_text_that_finishes_a_word_in_completion_mode_gets_no_space_in_it(study):
    # A completion continuing the word the writer paused in: "The old light" + "house ...".
    doc = "At night the old light"
    # Accepted, the ghost text is appended to the writer's text as it is.
    assert doc + _ghost_text(study, "house stood on the cliff.", "completion", doc) == (
        "At night the old lighthouse stood on the cliff."
    )


def test_ghost_text_opening_a_quotation_in_chat_mode_is_set_apart_from_the_sentence_before(study):
    doc = "Someone knocked at the door. He looked up."
    assert doc + _ghost_text(study, '"Who is there?" she asked.', "chat", doc) == (
        'Someone knocked at the door. He looked up. "Who is there?" she asked.'
    )


def test_a_writer_past_50000_characters_still_gets_ghost_text(study, model_url):
    # The editor takes a text of up to 99,999 characters (the finish's limit), but the ghost
    # text request took at most 50,000: past them every request was refused (400) and the
    # writer's ghost text stopped for good, without a word.
    app = _app(study, model_url, "L2")
    client = app.test_client()
    session_id = _session(client)
    doc = "The rain fell on the town all night. " * 2000  # 74,000 characters
    history = [{"kind": "reject", "index": len(doc) - 10, "text": " A rejected idea."}]
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "history": history})
    assert response.status_code == 200, response.json
    assert response.json["suggestion"]["original"].strip()
