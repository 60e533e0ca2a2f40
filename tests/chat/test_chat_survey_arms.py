"""A chat study's periodic rating asked of some assistants only (`arms` on its in-session
survey): a session with another assistant is neither shown the rating form nor held at the
third exchange for it."""

from __future__ import annotations

from dataclasses import replace

from study import config
from study.server import create_app
from study.store import reading
from study.store import sessions as session_store
from tests.chat.flow import choose_intent, prewrite, say, start_chat


def test_only_the_listed_assistant_s_sessions_are_held_for_the_periodic_rating(chat_folder, model_url):
    toml = chat_folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'preset = "collabllm-periodic"\n' in text
    toml.write_text(text.replace('preset = "collabllm-periodic"\n',
                                 'preset = "collabllm-periodic"\narms = ["collabllm"]\n'), encoding="utf-8")  # fmt: skip
    study = config.load(chat_folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    held = {}
    for n in range(3):  # three assistants, the least-used first: one session each
        session_id = start_chat(client, access_code=f"chat-{n}")
        choose_intent(client, session_id)
        prewrite(client, session_id)
        with reading(app.extensions["study.engine"]) as connection:
            arm = session_store.get(connection, session_id)["condition"]
        page = client.get(f"/s/{session_id}/chat").data.decode()
        for exchange in range(1, 4):
            assert say(client, session_id, f"Message number {exchange}, about my document.").status_code == 200
        fourth = say(client, session_id, "Message number 4, about my document.")
        held[arm] = ("Submit Periodic Evaluation" in page, fourth.status_code, fourth.json.get("owed"))
    assert held == {
        "collabllm": (True, 409, [{"survey": "periodic", "occasion": 3}]),
        "base": (False, 200, []),
        "proactive-base": (False, 200, []),
    }
