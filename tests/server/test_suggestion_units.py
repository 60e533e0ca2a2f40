"""How much of a model output a Tab suggestion keeps (a condition's `unit`), through the Flask
test client and the local deterministic model, whose every output is two or three sentences:
`study init --design dhillon`'s next-paragraph arm suggests paragraphs, its next-sentence arm
single sentences (Dhillon et al. CHI 2024)."""

from __future__ import annotations

import json
import re

from sqlalchemy import select

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.store import reading
from study.store.db import suggestion_requests
from tests.conftest import CONTACT
from tests.server.flow import start, to_writing
from tests.server.study_edits import conditions_given, edit_arms, sessions_of

SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def test_the_next_paragraph_arm_suggests_several_sentences_and_the_next_sentence_arm_one(tmp_path, model_url):
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={
        "min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{model_url}"', **CONTACT})  # fmt: skip
    study = config.load(folder)
    client = create_app(study).test_client()
    shown: dict[str, list[str]] = {}
    for code in ("p1", "p2", "p3", "p4", "p5", "p6"):  # each begins with the arm its row of the square puts first
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt=None)
        arm = conditions_given(folder)[session_id]
        if arm == "no-ai" or arm in shown:
            continue
        prompt = {s["session_id"]: s["prompt_code"] for s in sessions_of(folder)}[session_id]
        doc = study.prompt(prompt).text + " The"
        response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": doc})
        assert response.status_code == 200, response.json
        shown[arm] = [s["trimmed"] for s in response.json["suggestions"]]
    assert shown.keys() == {"next-sentence", "next-paragraph"}
    assert shown["next-sentence"] and all(len(SENTENCE_END.findall(s)) == 1 for s in shown["next-sentence"])
    assert shown["next-paragraph"] and all(len(SENTENCE_END.findall(s)) >= 2 for s in shown["next-paragraph"])


def dhillon_on(tmp_path, model_url, edit=None):
    """`study init --design dhillon` asking `model_url`, its arms as `edit` makes them."""
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={
        "min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{model_url}"', **CONTACT})  # fmt: skip
    if edit is not None:
        edit_arms(folder, lambda arms: [edit(arm) if arm["name"] == "next-paragraph" else arm for arm in arms])
    return folder


def ask_in_arm(folder, arm: str):
    """The first new participant's session given `arm`, after one Tab press: (the page's
    answer, the call as the study database stored it)."""
    study = config.load(folder)
    app = create_app(study)
    client = app.test_client()
    for code in ("p1", "p2", "p3", "p4", "p5", "p6"):  # each begins with the arm its row of the square puts first
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt=None)
        if conditions_given(folder)[session_id] == arm:
            break
    prompt = {s["session_id"]: s["prompt_code"] for s in sessions_of(folder)}[session_id]
    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": study.prompt(prompt).text + " The"})
    assert response.status_code == 200, response.json
    with reading(app.extensions["study.engine"]) as connection:
        (stored,) = connection.execute(select(suggestion_requests)).mappings().all()
    return response.json, dict(stored)


def test_the_next_paragraph_arm_in_chat_mode_asks_the_model_for_a_paragraph(tmp_path, endpoint_factory):
    # A chat model told "the next sentence" writes one: the arm would not be Dhillon et al.'s.
    endpoint = endpoint_factory()
    folder = dhillon_on(tmp_path, endpoint.url, edit=lambda arm: {**arm, "mode": "chat"})
    _, stored = ask_in_arm(folder, "next-paragraph")

    (body,) = endpoint.bodies
    system = body["messages"][0]
    assert system["role"] == "system" and "the next paragraph" in system["content"]
    assert "sentence" not in system["content"]
    assert json.loads(stored["parameters"])["system_prompt"] == system["content"]  # as a release's arms.json gives it


def test_an_arms_own_system_prompt_still_wins_over_its_units(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    own = "Continue the story with one short paragraph."
    folder = dhillon_on(tmp_path, endpoint.url, edit=lambda arm: {**arm, "mode": "chat", "system_prompt": own})
    ask_in_arm(folder, "next-paragraph")

    (body,) = endpoint.bodies
    assert body["messages"][0] == {"role": "system", "content": own}


def test_a_paragraph_cut_by_max_tokens_ends_at_its_last_whole_sentence(tmp_path, model_url):
    # The deterministic model writes sentences of about ten tokens: 25 run out mid-sentence.
    folder = dhillon_on(tmp_path, model_url, edit=lambda arm: {**arm, "max_tokens": 25})
    answer, stored = ask_in_arm(folder, "next-paragraph")

    cut = [o["text"] for o in json.loads(stored["raw"]) if o["finish_reason"] == "length"]
    assert cut and not any(SENTENCE_END.search(text.rstrip()[-1:]) for text in cut)  # the model's, kept as sent
    shown = [s["trimmed"] for s in answer["suggestions"]]
    assert shown and all(re.search(r"[.!?][\"'”’)]*$", s) for s in shown)
    for text in cut:  # each shown without the sentence max_tokens stopped
        (suggestion,) = [s for s in answer["suggestions"] if text.startswith(s["original"])]
        assert len(SENTENCE_END.findall(suggestion["original"])) == len(SENTENCE_END.findall(text)) >= 1
        assert suggestion["trimmed"] == suggestion["original"].strip()
