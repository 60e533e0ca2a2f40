"""How much of a model output a Tab suggestion keeps (a condition's `unit`), through the Flask
test client and the local deterministic model, whose every output is two or three sentences:
`study init --design dhillon`'s next-paragraph arm suggests paragraphs, its next-sentence arm
single sentences (Dhillon et al. CHI 2024)."""

from __future__ import annotations

import re

from study import config
from study.cli import write_study_files
from study.server import create_app
from tests.conftest import CONTACT
from tests.server.flow import start, to_writing
from tests.server.study_edits import conditions_given, sessions_of

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
