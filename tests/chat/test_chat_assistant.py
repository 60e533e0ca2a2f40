"""A chat reply's model call (study.paradigms.chat.assistant.reply) on the wire: the request an
OpenAI-compatible endpoint gets, and what becomes of each kind of answer. `reply` never raises:
an answer without a reply is `Reply.error`, as the researcher reads it."""

from __future__ import annotations

import json
import threading

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from study.config import Condition, SuggestionSettings
from study.paradigms.chat import assistant

CONDITION = Condition(name="chat", model="chat-model", mode="chat", temperature=0.7, top_p=0.9,
                      presence_penalty=0.1, frequency_penalty=0.2, system_prompt="Be brief.")  # fmt: skip
HISTORY = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "A title?"}]


@pytest.fixture
def endpoint():
    """An endpoint answering each call with the body the test sets, noting each request."""
    state = {"answer": b"", "requests": []}

    @Request.application
    def app(request):
        state["requests"].append((request.path, json.loads(request.get_data())))
        return Response(state["answer"], content_type="application/json")

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state["settings"] = SuggestionSettings(endpoint=f"http://127.0.0.1:{server.port}/v1")
    yield state
    server.shutdown()


def _answer(content, **fields) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return json.dumps({"id": "x", "object": "chat.completion", "model": "chat-model-2025", "choices": [choice], **fields}).encode()


def test_the_conversation_and_the_decoding_settings_are_sent_and_the_reply_read(endpoint):
    endpoint["answer"] = _answer("  A Quiet Harbour  ")
    result = assistant.reply(endpoint["settings"], CONDITION, HISTORY, 64)
    assert result.error is None and result.text == "A Quiet Harbour" and result.finish_reason == "stop"
    assert result.answered_model == "chat-model-2025"
    [(path, sent)] = endpoint["requests"]
    assert path == "/v1/chat/completions"
    assert sent == {
        "model": "chat-model", "max_tokens": 64, "temperature": 0.7, "top_p": 0.9,
        "presence_penalty": 0.1, "frequency_penalty": 0.2,
        "messages": [{"role": "system", "content": "Be brief."}, *HISTORY],
    }  # fmt: skip
    assert result.parameters["mode"] == "chat_reply" and result.parameters["model"] == "chat-model"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_answer(None), "empty reply"),
        (_answer("   "), "empty reply"),
        (json.dumps({"id": "x", "choices": []}).encode(), "malformed response"),
        (json.dumps({"id": "x"}).encode(), "malformed response"),
        (_answer(["not", "text"]), "malformed response"),
        (b"<html>a proxy's page</html>", "malformed response"),
    ],
    ids=["null", "blank", "no-choices", "no-list", "not-text", "not-json"],
)
def test_an_answer_without_a_reply_is_an_error_not_an_exception(endpoint, answer, said):
    endpoint["answer"] = answer
    result = assistant.reply(endpoint["settings"], CONDITION, HISTORY, 64)
    assert result.text == "" and said in result.error


def test_a_reply_has_the_line_breaks_the_writers_document_can_hold(endpoint):
    # The page inserts a reply into its <textarea>, which holds "\r\n" as "\n": the stored reply,
    # and so the logged insert, must be what the document then holds, or the log replays askew.
    endpoint["answer"] = _answer("Title\r\n\r\nA first line.\rA second.")
    result = assistant.reply(endpoint["settings"], CONDITION, HISTORY, 64)
    assert result.text == "Title\n\nA first line.\nA second."
