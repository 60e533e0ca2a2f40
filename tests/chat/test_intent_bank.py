"""The intent bank as CollabLLM ran it (issue 22, item 4): about 50 intents per document type,
12 of them offered to each participant, an editable copy per study, and a draft written by a
model (`study chat draft-intents`, here against a real `study lm serve --backend deterministic`)."""

from __future__ import annotations

import re
import threading
import tomllib
import uuid
from dataclasses import replace

import pytest
from click.testing import CliRunner
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from study import config
from study.cli import main
from study.server import create_app
from tests.chat.flow import start_chat
from tests.lm import served

# The twelve creative-writing intents of the paper's screenshot (App. E), at their indices.
SCREENSHOT = {
    17: "Parody Retelling", 39: "Cyberpunk Mystery", 5: "Mermaid Tale", 27: "Historical Fiction",
    33: "Utopian Society", 46: "Dark Fairy Tale", 0: "Space Western", 25: "Contemporary Life",
    23: "Mystery Thriller", 2: "Musical Script", 49: "Anthropomorphic Critters", 45: "Animal Perspective",
}  # fmt: skip


@pytest.fixture(scope="module")
def lm_serve():
    with served.lm_serve("deterministic") as base_url:
        yield base_url


def _offered(client) -> list[str]:
    session_id = start_chat(client, access_code=f"writer-{uuid.uuid4().hex[:8]}")
    page = client.get(f"/s/{session_id}/intent").data.decode()
    return re.findall(r'name="intent" value="([^"]+)"', page)


def test_the_shipped_bank_has_fifty_intents_of_ten_questions_per_type(chat_study):
    for document_type in chat_study.chat.document_types:
        bank = chat_study.chat.intents_of(document_type.name)
        assert sorted(i.index for i in bank) == list(range(50)), document_type.name
        assert len({i.title for i in bank}) == 50 and all(len(i.questions) == 10 for i in bank)
        assert all(i.description.endswith(".") for i in bank)
    creative = {i.index: i.title for i in chat_study.chat.intents_of("creative_writing")}
    assert {index: creative[index] for index in SCREENSHOT} == SCREENSHOT


def test_each_participant_is_offered_twelve_drawn_at_random_from_the_type(chat_client, chat_study):
    offers = [_offered(chat_client) for _ in range(4)]
    for offered in offers:
        assert len(offered) == len(set(offered)) == 12
        assert len({key.split("/")[0] for key in offered}) == 1  # all of the session's document type
    # Four draws of 12 from 50: the same set twice would mean no draw at all.
    assert len({frozenset(o) for o in offers}) == 4


def test_how_many_are_offered_is_set_in_study_toml(chat_folder, chat_study):
    toml = chat_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("intents_shown = 12", "intents_shown = 5"), encoding="utf-8")
    study = config.load(chat_folder)
    client = create_app(replace(study, suggestions=chat_study.suggestions)).test_client()
    assert len(_offered(client)) == 5


def test_a_study_edits_its_own_copy_of_the_bank(chat_folder, chat_study):
    result = CliRunner().invoke(main, ["chat", "copy-intents", str(chat_folder)])
    assert result.exit_code == 0, result.output
    copied = chat_folder / "intents" / "creative_writing.toml"
    copied.write_text(copied.read_text(encoding="utf-8").replace('title = "Cyberpunk Mystery"', 'title = "Neon Noir"'))
    toml = chat_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('intent_bank = ""', 'intent_bank = "intents"'))
    assert config.load(chat_folder).chat.intent("creative_writing/39").title == "Neon Noir"
    assert config.load(chat_folder).chat.intent("blog_post/49").title  # the other types' files too
    again = CliRunner().invoke(main, ["chat", "copy-intents", str(chat_folder)])
    assert again.exit_code != 0 and "may hold your edits" in again.output  # the edit is not overwritten
    assert "Neon Noir" in copied.read_text(encoding="utf-8")


def test_a_broken_file_in_a_bank_folder_is_named(chat_folder):
    CliRunner().invoke(main, ["chat", "copy-intents", str(chat_folder)])
    broken = chat_folder / "intents" / "blog_post.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("index = 3\n", 'index = "three"\n', 1))
    toml = chat_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('intent_bank = ""', 'intent_bank = "intents"'))
    with pytest.raises(config.ConfigError) as error:
        config.load(chat_folder)
    assert str(broken) in str(error.value) and "index" in str(error.value)


def test_draft_intents_writes_an_editable_bank_with_a_model(chat_folder, lm_serve):
    toml = chat_folder / "study.toml"
    # Named before the bank is complete: drafting still works (the study loads once it is).
    toml.write_text(toml.read_text(encoding="utf-8").replace('intent_bank = ""', 'intent_bank = "intents"'))
    for type_name, count in (("blog_post", 50), ("creative_writing", 12), ("personal_statement", 12)):
        result = CliRunner().invoke(main, [
            "chat", "draft-intents", str(chat_folder), "--type", type_name, "--n", str(count),
            "--endpoint", lm_serve, "--model", "Llama-3.1-8B-Instruct",
        ])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert f"Wrote {count} intents to {chat_folder / 'intents' / (type_name + '.toml')}" in result.output
    text = (chat_folder / "intents" / "blog_post.toml").read_text(encoding="utf-8")
    # A draft says so, and names the model asked for beside the one that answered (issue 20).
    assert "a DRAFT by a model" in text and 'model "Llama-3.1-8B-Instruct"' in text
    assert 'answered by "deterministic"' in text
    drafted = tomllib.loads(text)["intents"]
    assert [i["index"] for i in drafted] == list(range(50))
    assert len({i["title"].lower() for i in drafted}) == 50
    assert all(len(i["questions"]) == 10 and i["description"] for i in drafted)

    study = config.load(chat_folder)
    assert [len(study.chat.intents_of(t)) for t in ("blog_post", "creative_writing", "personal_statement")] == [50, 12, 12]

    again = CliRunner().invoke(main, ["chat", "draft-intents", str(chat_folder), "--type", "blog_post",
                                      "--endpoint", lm_serve, "--model", "m"])  # fmt: skip
    assert again.exit_code != 0 and "may hold your edits" in again.output


def test_draft_intents_names_the_fix_for_a_bad_type_or_a_dead_endpoint(chat_folder):
    bad = CliRunner().invoke(main, ["chat", "draft-intents", str(chat_folder), "--type", "poem",
                                    "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"])  # fmt: skip
    assert bad.exit_code != 0 and "'poem' is not a document type" in bad.output and "blog_post" in bad.output
    dead = CliRunner().invoke(main, ["chat", "draft-intents", str(chat_folder), "--type", "blog_post", "--n", "1",
                                     "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"])  # fmt: skip
    assert dead.exit_code != 0 and "the model endpoint at http://127.0.0.1:9/v1 failed" in dead.output
    assert not (chat_folder / "intents" / "blog_post.toml").exists()  # nothing half-written


def test_draft_intents_never_prints_the_api_key_an_endpoint_echoes(chat_folder, monkeypatch):
    # An endpoint (or a proxy before it) that puts the key it was sent in its error message.
    echoing = Flask(__name__)

    @echoing.post("/v1/chat/completions")
    def refuse():
        key = request.headers["Authorization"].removeprefix("Bearer ")
        return jsonify(error={"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error"}), 401

    server = make_server("127.0.0.1", 0, echoing, threaded=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    secret = "sk-drafting-0123456789abcdefSECRET"
    monkeypatch.setenv("STUDY_TEST_DRAFT_KEY", secret)
    try:
        result = CliRunner().invoke(main, [
            "chat", "draft-intents", str(chat_folder), "--type", "blog_post", "--n", "1",
            "--endpoint", f"http://127.0.0.1:{server.port}/v1", "--model", "m", "--api-key-env", "STUDY_TEST_DRAFT_KEY",
        ])  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code != 0 and "failed" in result.output
    assert secret not in result.output
