"""The suggestion engine against a real HTTP endpoint: `study lm serve` running in a thread."""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Iterator, Sequence

import pytest
from flask import Flask, jsonify
from werkzeug.serving import make_server

from study.config import Condition, SuggestionSettings
from study.lm.backends import DeterministicBackend, Generation
from study.lm.server import serve_in_thread
from study.paradigms.tab.engine import SuggestionEngine

KEY_ENV = "STUDY_TEST_SUGGEST_KEY"
SECRET = "sk-test-0123456789abcdefSECRET"

STORY = "The lighthouse keeper had not spoken to anyone in years. One night, someone knocked"


class RecordingBackend(DeterministicBackend):
    """The deterministic model, remembering what each request asked for."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(delay)
        self.calls: list[dict] = []
        self.chats: list[list[dict]] = []

    def generate(self, prompt: str, **kwargs) -> list[Generation]:
        self.calls.append({"prompt": prompt, **kwargs})
        return super().generate(prompt, **kwargs)

    def format_chat(self, messages: Sequence[dict]) -> str:
        self.chats.append(list(messages))
        return super().format_chat(messages)


class ScriptedBackend(DeterministicBackend):
    """Answers with fixed texts, one per choice, to check what the writer ends up seeing."""

    def __init__(self, outputs: list[str]) -> None:
        super().__init__()
        self.outputs = outputs

    def generate(self, prompt: str, *, n: int = 1, **kwargs) -> list[Generation]:
        return [
            Generation(text, [-0.5] * len(text.split() or [""]), "stop", [text])
            for text in self.outputs[:n]
        ]


class BrokenBackend(DeterministicBackend):
    def generate(self, prompt: str, **kwargs) -> list[Generation]:
        raise RuntimeError("out of memory")


def running(backend) -> Iterator[str]:
    base_url, stop = serve_in_thread(backend)
    try:
        yield base_url
    finally:
        stop()


@pytest.fixture
def recorder() -> RecordingBackend:
    return RecordingBackend()


@pytest.fixture
def endpoint(recorder: RecordingBackend) -> Iterator[str]:
    yield from running(recorder)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def engine_for(base_url: str, **settings) -> SuggestionEngine:
    return SuggestionEngine(SuggestionSettings(endpoint=base_url, api_key_env=KEY_ENV, **settings))


def condition(**overrides) -> Condition:
    values = dict(
        name="test", genre="creative", model="davinci", n=5, max_tokens=30, temperature=0.75,
        top_p=0.95, presence_penalty=0.1, frequency_penalty=0.5,
    )
    return Condition(**{**values, **overrides})


def test_completion_mode_sends_the_document_and_decoding_parameters(endpoint, recorder) -> None:
    result = engine_for(endpoint).suggest(condition(), STORY)

    assert result.error is None
    [call] = recorder.calls
    assert call["prompt"] == STORY
    assert {k: call[k] for k in ("n", "max_tokens", "temperature", "top_p")} == {
        "n": 5, "max_tokens": 30, "temperature": 0.75, "top_p": 0.95,
    }
    assert (call["presence_penalty"], call["frequency_penalty"]) == (0.1, 0.5)
    # The unit a suggestion was cut to is recorded with the call, not sent to the model.
    assert "unit" not in call
    assert result.parameters == {
        "model": "davinci", "mode": "completion", "n": 5, "max_tokens": 30,
        "temperature": 0.75, "top_p": 0.95, "presence_penalty": 0.1, "frequency_penalty": 0.5,
        "unit": "sentence",
    }


def test_completion_suggestions_are_first_sentences_that_continue_the_document(endpoint) -> None:
    result = engine_for(endpoint).suggest(condition(), STORY)

    assert len(result.raw) == 5
    assert all(r["finish_reason"] in ("stop", "length") for r in result.raw)
    assert 1 <= len(result.suggestions) <= 5
    for suggestion in result.suggestions:
        assert suggestion["original"].startswith(" ")  # "knocked" + " She ..."
        assert suggestion["trimmed"] == suggestion["original"].strip()
        assert suggestion["trimmed"][-1] in ".!"
        assert 0 < suggestion["probability"] <= 1
    first = result.suggestions[0]
    source = next(r for r in result.raw if r["text"].startswith(first["original"]))
    assert first["probability"] == pytest.approx(math.exp(source["logprob_sum"]))
    assert result.latency_ms > 0


def test_a_trailing_space_is_not_sent_and_not_doubled(endpoint, recorder) -> None:
    result = engine_for(endpoint).suggest(condition(), STORY + ". ")

    assert recorder.calls[0]["prompt"] == STORY + "."
    for suggestion in result.suggestions:
        assert not (STORY + ". " + suggestion["original"]).count(".  ")


def test_chat_mode_sends_system_prompt_and_document(endpoint, recorder) -> None:
    engine = engine_for(endpoint, system_prompt="Write the next sentence.")
    result = engine.suggest(condition(mode="chat", model="gpt-4o-mini", n=3), STORY)

    assert result.error is None
    assert recorder.chats == [
        [{"role": "system", "content": "Write the next sentence."}, {"role": "user", "content": STORY}]
    ]
    assert recorder.calls[0]["n"] == 3 and recorder.calls[0]["frequency_penalty"] == 0.5
    assert 1 <= len(result.suggestions) <= 3
    for suggestion in result.suggestions:
        assert suggestion["original"].startswith(" ") and not suggestion["original"].startswith("  ")
        assert suggestion["probability"] is not None
    assert result.parameters["mode"] == "chat"


def test_a_chat_reply_that_finishes_the_writers_sentence_gets_no_space_before_its_comma() -> None:
    # The writer stopped mid-sentence; the model's "next sentence" finishes theirs.
    outputs = [", then walked away without a word.", "Nobody answered."]
    for base_url in running(ScriptedBackend(outputs)):
        result = engine_for(base_url).suggest(condition(mode="chat", n=2), "He paused at the door")
    assert [s["original"] for s in result.suggestions] == [", then walked away without a word.", " Nobody answered."]


def test_a_chat_reply_in_japanese_or_chinese_gets_no_space_a_writer_would_have_to_delete() -> None:
    # Japanese and Chinese put no space between sentences or words: a completion model
    # continues "東京には" with "多くの…", and a chat model's reply must be joined the same way.
    outputs = ["多くの人が住んでいます。", "人口很多。"]
    for base_url in running(ScriptedBackend(outputs)):
        japanese = engine_for(base_url).suggest(condition(mode="chat", n=1), "東京には")
        chinese = engine_for(base_url).suggest(condition(mode="chat", n=2), "北京是中国的首都。")
    assert [s["original"] for s in japanese.suggestions] == ["多くの人が住んでいます。"]
    assert [s["original"] for s in chinese.suggestions][1] == "人口很多。"
    # A word after English still gets its space.
    for base_url in running(ScriptedBackend(["東京 is big."])):
        english = engine_for(base_url).suggest(condition(mode="chat", n=1), "I visited Tokyo.")
    assert english.suggestions[0]["original"] == " 東京 is big."


def test_suggestions_on_screen_are_not_repeated(endpoint) -> None:
    engine = engine_for(endpoint)
    greedy = condition(temperature=0.0)  # every query gives the same outputs
    first = engine.suggest(greedy, STORY)
    assert len(first.suggestions) == 1  # five identical greedy outputs are one suggestion
    again = engine.suggest(greedy, STORY, on_screen=[first.suggestions[0]["trimmed"]])
    assert again.error is None and again.suggestions == []


def test_the_writer_sees_the_filtered_suggestions() -> None:
    outputs = [" He left. Then", "\n\nhe left.", " Shut up, she said.", "", " The class ended."]
    for base_url in running(ScriptedBackend(outputs)):
        result = engine_for(base_url, blocklist=("shut up", "ass")).suggest(condition(), "Hi.")
    assert [(s["index"], s["original"]) for s in result.suggestions] == [
        (0, " He left."), (1, " The class ended."),
    ]
    assert len(result.raw) == 5


def test_a_slow_model_becomes_a_timeout_error_quickly() -> None:
    for base_url in running(DeterministicBackend(delay=3.0)):
        start = time.perf_counter()
        result = engine_for(base_url, timeout_seconds=0.5).suggest(condition(), STORY)
        elapsed = time.perf_counter() - start
    assert result.error.startswith("the model endpoint did not answer within 0.5 s")
    assert elapsed < 2.0
    assert result.suggestions == []


def test_an_unreachable_endpoint_becomes_an_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = engine_for(f"http://127.0.0.1:{port}/v1", timeout_seconds=2).suggest(condition(), STORY)
    assert result.error == f"cannot reach the model endpoint at http://127.0.0.1:{port}/v1; is it running?"
    assert result.suggestions == []


def test_a_server_error_becomes_an_error_with_its_message() -> None:
    for base_url in running(BrokenBackend()):
        result = engine_for(base_url).suggest(condition(), STORY)
    assert "answered HTTP 500" in result.error
    assert "out of memory" in result.error


def test_an_unknown_mode_is_reported_not_raised(endpoint) -> None:
    result = engine_for(endpoint).suggest(condition(mode="edit"), STORY)
    assert "mode 'edit'" in result.error


# A fake provider for answers our own server never gives: OpenAI's 401 echoes the key.
fake = Flask(__name__)


@fake.post("/v1/completions")
def unauthorized():
    from flask import request

    key = request.headers["Authorization"].removeprefix("Bearer ")
    if key.endswith("SECRET"):
        message = f"Incorrect API key provided: {key}."
        return jsonify(error={"message": message, "type": "invalid_request_error"}), 401
    if key.startswith("sk-proxy"):
        # A proxy that dumps the headers it forwarded: the key comes late in a long message.
        headers = "accept: application/json, content-type: application/json, user-agent: OpenAI/Python, "
        message = f"upstream refused the request (bad gateway configuration); headers: {headers}"
        message += f"authorization: Bearer {key}"
        return jsonify(error={"message": message, "type": "invalid_request_error"}), 400
    if key.startswith("sk-echo"):
        message = f"Your request with key {key} was rejected."
        return jsonify(error={"message": message, "type": "invalid_request_error"}), 400
    return jsonify(result="not an OpenAI response")


@pytest.fixture
def fake_provider() -> Iterator[str]:
    server = make_server("127.0.0.1", 0, fake, threaded=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.port}/v1"
    server.shutdown()
    server.server_close()


def test_error_messages_never_contain_the_api_key(fake_provider, monkeypatch) -> None:
    result = engine_for(fake_provider).suggest(condition(), STORY)
    assert "refused the API key (HTTP 401)" in result.error
    assert KEY_ENV in result.error
    assert SECRET not in result.error

    # An endpoint that echoes the key in any other error must not leak it either.
    monkeypatch.setenv(KEY_ENV, "sk-echo-key")
    result = engine_for(fake_provider).suggest(condition(), STORY)
    assert result.error.endswith("answered HTTP 400: Your request with key [redacted] was rejected.")


def test_no_part_of_the_api_key_is_left_when_a_long_error_message_is_shortened(fake_provider, monkeypatch) -> None:
    # The endpoint's message is cut to 200 characters for the log; cut through the key, the
    # key's first characters would be left where redaction no longer finds the whole key.
    key = "sk-proxy-" + "0123456789abcdef" * 6
    monkeypatch.setenv(KEY_ENV, key)
    result = engine_for(fake_provider).suggest(condition(), STORY)
    assert "answered HTTP 400: upstream refused the request" in result.error
    assert key[:12] not in result.error


def test_a_malformed_response_becomes_an_error(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-accepted")
    result = engine_for(fake_provider).suggest(condition(), STORY)
    assert result.error.startswith("the model endpoint at http://127.0.0.1:")
    assert "malformed response" in result.error
