"""The chat API relays the assistant's reply as the model writes it, stores only the whole
reply, logs a stream cut off as such, and bounds what the model reads ([chat] context_chars)."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from dataclasses import replace

import pytest
from werkzeug.serving import make_server

from study import config
from study.lm.backends import DeterministicBackend
from study.lm.server import create_app as create_model_app
from study.paradigms.chat.export import export_chat
from study.server import create_app
from study.paradigms.chat import store as chat_store
from study.store import make_engine, reading
from study.store.db import suggestion_requests
from tests.chat.flow import choose_intent, prewrite, rate, start_chat


class Endpoint:
    """`study lm serve`'s app on a real HTTP server that keeps every request body and, when
    `cut_after` is set, ends each stream after that many events, as a dying endpoint would."""

    def __init__(self, cut_after: int | None = None) -> None:
        self.bodies: list[dict] = []
        self.cut_after = cut_after
        self._app = create_model_app(DeterministicBackend())
        self._server = make_server("127.0.0.1", 0, self._wsgi, threaded=True)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.port}/v1"

    def _wsgi(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length)
        self.bodies.append(json.loads(raw or b"{}"))
        environ["wsgi.input"] = __import__("io").BytesIO(raw)
        chunks = self._app(environ, start_response)
        if self.cut_after is None:
            return chunks
        return list(chunks)[: self.cut_after]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def served(chat_folder):
    made = []

    def serve(endpoint: Endpoint, system_prompt: str | None = None, **chat):
        made.append(endpoint)
        study = config.load(chat_folder)
        study = replace(
            study, suggestions=replace(study.suggestions, endpoint=endpoint.url),
            chat=replace(study.chat, **chat),
        )  # fmt: skip
        if system_prompt is not None:  # every assistant's, so the window does not hang on which one is drawn
            study = replace(study, conditions=[replace(c, system_prompt=system_prompt) for c in study.conditions])
        return study, create_app(study).test_client()

    yield serve
    for endpoint in made:
        endpoint.stop()


def _chatting(client) -> str:
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    return session_id


def _send(client, session_id: str, text: str, client_id: str | None = None):
    return client.post(
        f"/api/sessions/{session_id}/chat/messages",
        json={"client_id": client_id or uuid.uuid4().hex, "content": text, "stream": True},
    )


def _lines(response) -> list[dict]:
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    return [json.loads(line) for line in response.get_data(as_text=True).splitlines()]


def test_the_reply_arrives_in_pieces_and_the_whole_reply_is_stored(served) -> None:
    study, client = served(Endpoint())
    session_id = _chatting(client)
    lines = _lines(_send(client, session_id, "Help me begin my blog post about gardens."))
    assert lines[0]["user"]["content"] == "Help me begin my blog post about gardens."
    pieces = [line["delta"] for line in lines[1:-1]]
    assert len(pieces) > 3 and all("delta" in line for line in lines[1:-1])
    final = lines[-1]
    assert final["exchanges"] == 1 and final["assistant"]["content"] == "".join(pieces).strip()
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        stored = chat_store.messages(connection, session_id)
    engine.dispose()
    assert [m["content"] for m in stored] == [lines[0]["user"]["content"], final["assistant"]["content"]]


def test_a_stream_cut_off_stores_no_reply_and_is_logged_as_cut_off(served) -> None:
    study, client = served(Endpoint(cut_after=4))  # the role and three pieces, then nothing
    session_id = _chatting(client)
    client_id = uuid.uuid4().hex
    lines = _lines(_send(client, session_id, "Help me begin my blog post about gardens.", client_id))
    assert lines[-1]["cut_off"] is True and lines[-1]["status"] == 502
    assert "endpoint" not in lines[-1]["error"]  # the participant's line stays calm
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        stored = chat_store.messages(connection, session_id)
        row = connection.execute(suggestion_requests.select()).mappings().all()[-1]
    engine.dispose()
    assert [m["role"] for m in stored] == ["user"]  # the message waits for a whole reply
    assert row["error"].startswith("the reply was cut off after ")
    assert json.loads(row["raw"])[0]["finish_reason"] == "cut_off" and json.loads(row["raw"])[0]["text"]


class KeptAlive:
    """An endpoint that opens the stream and then only keeps it alive, a comment line 5 times a
    second for 20 s (OpenRouter's ": OPENROUTER PROCESSING" while no model takes the request)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stopped = threading.Event()
        threading.Thread(target=self._answer, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _answer(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            for _ in range(100):
                if self._stopped.wait(0.2):
                    return
                try:
                    connection.sendall(b": OPENROUTER PROCESSING\n\n")
                except OSError:  # the server gave up on it
                    return

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()


def test_a_stream_only_kept_alive_ends_at_twice_the_time_limit(served) -> None:
    study, _ = served(KeptAlive())
    client = create_app(replace(study, suggestions=replace(study.suggestions, timeout_seconds=0.5))).test_client()
    session_id = _chatting(client)
    began = time.monotonic()
    lines = _lines(_send(client, session_id, "Help me begin my blog post about gardens."))
    assert time.monotonic() - began < 5
    assert lines[-1]["status"] == 504 and lines[-1]["cut_off"] is False


def test_the_model_reads_the_document_and_the_latest_turns_within_the_window(served, tmp_path) -> None:
    endpoint = Endpoint()
    study, client = served(endpoint, system_prompt="You help the user write. " * 10, context_chars=1200)
    session_id = _chatting(client)
    draft = "My grandmother kept bees behind the shed. " * 3
    events = [{"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1,
               "textDelta": "", "messageSeq": None},
              {"seq": 1, "eventName": "text-insert", "eventSource": "user", "eventTimestamp": 2,
               "textDelta": {"ops": [{"insert": draft}]}, "messageSeq": None}]  # fmt: skip
    assert client.post(f"/api/sessions/{session_id}/chat/events", json={"events": events}).status_code == 200
    for n in range(1, 7):
        _lines(_send(client, session_id, f"Message {n}: " + "tell me more about the bees, please. " * 3))
        if n == 3:
            assert rate(client, session_id, 3).status_code == 200
    sent = endpoint.bodies[-1]["messages"]
    assert sum(len(m["content"]) for m in sent) <= 1200
    assert draft.strip() in sent[0]["content"]  # the document, with the system prompt
    assert sent[-1]["content"].startswith("Message 6:")  # the newest turn
    assert not any(m["content"].startswith("Message 1:") for m in sent)  # the oldest did not fit

    export_chat(study, tmp_path / "out", include_unfinished=True)
    record = json.loads((tmp_path / "out" / "conversations.jsonl").read_text().splitlines()[0])
    assert record["assistant"]["context_chars"] == 1200
    last = record["messages"][-1]["context"]
    assert last["messages_read"] == len(sent) - 1 and last["messages_left_out"] == 11 - last["messages_read"]
    assert last["document_chars"] == len(draft.strip())


def test_a_streamed_reply_records_the_model_that_answered_not_the_one_configured(served) -> None:
    # The chat page always streams (chat.js): the model that wrote the reply must be recorded
    # as the endpoint names it, as for a reply not streamed (study.store.provenance).
    study, client = served(Endpoint())
    session_id = _chatting(client)
    _lines(_send(client, session_id, "Help me begin my blog post about gardens."))
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        stored = chat_store.messages(connection, session_id)
        (call,) = connection.execute(suggestion_requests.select()).mappings().all()
    engine.dispose()
    configured = json.loads(call["parameters"])["model"]
    assert configured != "deterministic"
    assert call["model"] == "deterministic"
    assert [m["model"] for m in stored if m["role"] == "assistant"] == ["deterministic"]
