"""A chat arm's messages and replies (study.paradigms.chat.store, through arm_api) on SQLite and
PostgreSQL: each message is stored once under its client_id at the next seq, a message waiting
for its reply holds back any other, and a resent one gets its stored reply; a message the
model is not asked for is kept."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import func, select

from study.paradigms.chat import store as chat_store
from study.server import create_app
from study.store import reading
from study.store.db import suggestion_requests
from tests.chat.flow import chat_arm_study
from tests.server.flow import start, to_writing


def _chat_arm_app(tmp_path, database_url: str, engine, endpoint_url: str):
    study = chat_arm_study(tmp_path / "chat-arm", endpoint_url)
    return create_app(replace(study, database_url=database_url), engine=engine)


def test_messages_and_replies_take_their_seqs_once(tmp_path, database_url, engine, endpoint_factory):
    endpoint = endpoint_factory()
    app = _chat_arm_app(tmp_path, database_url, engine, endpoint.url)
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)

    def send(client_id: str, content: str = "An opening line?"):
        return client.post(f"/api/sessions/{session_id}/assistant/messages",
                           json={"client_id": client_id, "content": content})  # fmt: skip

    first = send("m-0000001")
    assert first.status_code == 200 and (first.json["user"]["seq"], first.json["assistant"]["seq"]) == (0, 1)
    assert send("m-0000001").json["assistant"] == first.json["assistant"] and endpoint.calls == 1

    endpoint.fail_next()
    assert send("m-0000002").status_code == 502
    held = send("m-0000003", "Something else?")
    assert held.status_code == 409 and held.json["pending_client_id"] == "m-0000002"
    again = send("m-0000002")
    assert again.status_code == 200 and (again.json["user"]["seq"], again.json["assistant"]["seq"]) == (2, 3)

    with reading(engine) as connection:
        stored = chat_store.messages(connection, session_id)
    assert [(m["seq"], m["role"], m["client_id"]) for m in stored] == [
        (0, "user", "m-0000001"), (1, "assistant", None), (2, "user", "m-0000002"), (3, "assistant", None),
    ]  # fmt: skip


def test_a_message_the_model_is_not_asked_for_is_kept_and_counts_no_call(
    tmp_path, database_url, engine, endpoint_factory
):
    # The message is stored in its model call's admission (model_calls.admission): a refusal
    # of the call keeps the message and records no call, whether no slot was free or a limit
    # was reached, and the message asked again is answered once.
    endpoint = endpoint_factory()
    study = chat_arm_study(tmp_path / "chat-arm", endpoint.url)
    one_a_minute = replace(study, database_url=database_url,
                           suggestions=replace(study.suggestions, max_requests_per_minute=1))  # fmt: skip
    app = create_app(one_a_minute, engine=engine)
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)

    def send(client_id: str, content: str):
        return client.post(f"/api/sessions/{session_id}/assistant/messages",
                           json={"client_id": client_id, "content": content})  # fmt: skip

    def stored() -> list[tuple]:
        with reading(engine) as connection:
            calls = connection.execute(select(func.count()).select_from(suggestion_requests)).scalar_one()
            return calls, [(m["role"], m["client_id"]) for m in chat_store.messages(connection, session_id)]

    slots = app.extensions["study.suggestion_slots"]
    taken = 0
    while slots.acquire(blocking=False):  # every model call of this process is in flight
        taken += 1
    busy = send("m-0000001", "First?")
    assert busy.status_code == 503 and stored() == (0, [("user", "m-0000001")])
    for _ in range(taken):
        slots.release()

    assert send("m-0000001", "First?").status_code == 200
    assert stored() == (1, [("user", "m-0000001"), ("assistant", None)])

    limited = send("m-0000002", "Second?")
    assert limited.status_code == 429 and "per minute" in limited.json["error"]
    assert stored() == (1, [("user", "m-0000001"), ("assistant", None), ("user", "m-0000002")])
    assert endpoint.calls == 1


def test_a_message_holding_a_nul_character_is_kept_and_answered_on_either_database(
    tmp_path, database_url, engine, endpoint_factory
):
    # A NUL pasted into the chat box: PostgreSQL's text cannot hold one (SQLite can), so the
    # message was a 500 there, kept nowhere. It is kept without it, as a writer sees it.
    endpoint = endpoint_factory()
    app = _chat_arm_app(tmp_path, database_url, engine, endpoint.url)
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)

    sent = client.post(f"/api/sessions/{session_id}/assistant/messages",
                       json={"client_id": "m-0000001", "content": "An opening\x00 line?"})  # fmt: skip

    assert sent.status_code == 200, sent.data[:300]
    assert sent.json["user"]["content"] == "An opening line?"
    with reading(engine) as connection:
        assert [m["content"] for m in chat_store.messages(connection, session_id)][0] == "An opening line?"


def test_a_chat_finished_with_a_nul_in_its_document_is_kept_on_either_database(
    tmp_path, database_url, engine, model_url
):
    # The chat study's Finish sends the document pane's text; as the writing stage's final
    # text, PostgreSQL's text cannot hold a NUL, and every Finish of that writer was a 500.
    from study import config
    from study.cli import write_study_files
    from tests.chat.flow import choose_intent, prewrite, say, start_chat

    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat")
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace("min_exchanges = 8", "min_exchanges = 1", 1))
    study = config.load(folder)
    study = replace(study, database_url=database_url, suggestions=replace(study.suggestions, endpoint=model_url))
    app = create_app(study, engine=engine)
    client = app.test_client()
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    assert say(client, session_id).status_code == 200

    finished = client.post(f"/s/{session_id}/chat/finish",
                           json={"last_seq": -1, "pending": 0, "document": "My\x00 story."})  # fmt: skip

    assert finished.status_code == 200, finished.data[:300]
    with reading(engine) as connection:
        assert chat_store.get(connection, session_id)["document"] == "My story."
