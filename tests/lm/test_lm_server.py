"""`study lm serve` speaks OpenAI's wire format: driven here with the official `openai` client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from study.lm.backends import DeterministicBackend, Generation
from study.lm.server import create_app, serve_in_thread

PROMPT = "She found the letter under the door"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    url, stop = serve_in_thread(DeterministicBackend())
    yield url
    stop()


@pytest.fixture(scope="module")
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=10)


def test_completions_return_n_choices_with_logprobs(client: openai.OpenAI) -> None:
    response = client.completions.create(
        model="davinci", prompt=PROMPT, n=4, max_tokens=30, temperature=0.9, logprobs=1, seed=7
    )
    assert response.object == "text_completion" and response.id.startswith("cmpl-")
    assert response.model == "deterministic"  # the model that answered, not the name asked for (issue 20)
    assert [c.index for c in response.choices] == [0, 1, 2, 3]
    assert len({c.text for c in response.choices}) > 1  # sampled, so they differ
    for choice in response.choices:
        logprobs = choice.logprobs
        assert "".join(logprobs.tokens) == choice.text
        assert len(logprobs.token_logprobs) == len(logprobs.tokens) <= 30
        assert all(lp <= 0 for lp in logprobs.token_logprobs)
        assert logprobs.text_offset[0] == len(PROMPT)
        assert logprobs.top_logprobs[0] == {logprobs.tokens[0]: logprobs.token_logprobs[0]}
        assert choice.finish_reason in ("stop", "length")
    usage = response.usage
    assert usage.completion_tokens == sum(len(c.logprobs.tokens) for c in response.choices)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0


def test_completions_without_logprobs_have_none(client: openai.OpenAI) -> None:
    response = client.completions.create(model="m", prompt=PROMPT, max_tokens=5)
    assert response.choices[0].logprobs is None
    assert len(response.choices) == 1


def test_max_tokens_cuts_the_text_and_says_so(client: openai.OpenAI) -> None:
    response = client.completions.create(model="m", prompt=PROMPT, max_tokens=3, logprobs=1, n=3)
    for choice in response.choices:
        assert len(choice.logprobs.tokens) == 3
        assert choice.finish_reason == "length"


def test_stop_sequences_end_the_text_before_them(client: openai.OpenAI) -> None:
    response = client.completions.create(
        model="m", prompt=PROMPT, max_tokens=60, n=3, stop=[".", "!"], logprobs=1
    )
    for choice in response.choices:
        assert "." not in choice.text and "!" not in choice.text
        assert choice.finish_reason == "stop"
        assert "".join(choice.logprobs.tokens) == choice.text


def test_the_same_seed_gives_the_same_text(client: openai.OpenAI) -> None:
    def ask(seed: int) -> list[str]:
        response = client.completions.create(
            model="m", prompt=PROMPT, n=3, max_tokens=20, temperature=1.0, seed=seed
        )
        return [c.text for c in response.choices]

    assert ask(1) == ask(1)
    assert ask(1) != ask(2)


def test_temperature_zero_is_greedy(client: openai.OpenAI) -> None:
    response = client.completions.create(model="m", prompt=PROMPT, n=3, temperature=0)
    assert len({c.text for c in response.choices}) == 1


def test_chat_completions_reply_as_the_assistant_with_logprobs(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Continue the text."},
            {"role": "user", "content": PROMPT},
        ],
        n=2, max_tokens=25, temperature=0.8, logprobs=True, top_logprobs=1,
    )
    assert response.object == "chat.completion" and response.id.startswith("chatcmpl-")
    assert [c.index for c in response.choices] == [0, 1]
    for choice in response.choices:
        message = choice.message
        assert message.role == "assistant"
        assert message.content and not message.content[0].isspace()
        content = choice.logprobs.content
        assert "".join(t.token for t in content) == message.content
        assert all(t.logprob <= 0 and t.bytes == list(t.token.encode()) for t in content)
        assert content[0].top_logprobs[0].token == content[0].token
    assert response.usage.completion_tokens <= 50


def test_chat_without_logprobs_has_none(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Hello"}], max_tokens=10
    )
    assert response.choices[0].logprobs is None


def test_models_lists_the_backend(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list().data] == ["deterministic"]


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"temperature": 5}, "temperature"),
        ({"n": 0}, "n"),
        ({"top_p": 1.5}, "top_p"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"logprobs": 9}, "logprobs"),
        ({"frequency_penalty": 3}, "frequency_penalty"),
    ],
)
def test_bad_parameters_are_openai_400_errors(client: openai.OpenAI, kwargs, param) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model="m", prompt=PROMPT, **kwargs)
    assert caught.value.status_code == 400
    error = caught.value.body
    error = error.get("error", error)  # the SDK may or may not unwrap {"error": ...}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert param in error["message"]


def test_a_chat_reply_keeps_to_max_tokens_when_max_completion_tokens_is_null(base_url: str) -> None:
    # OpenAI reads a null as "not given"; a client that sends every field (None as null) asks
    # for max_tokens 3, and must not get the 256 tokens of the default.
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "logprobs": True,
            "max_tokens": 3, "max_completion_tokens": None}  # fmt: skip
    answer = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10).json()
    (choice,) = answer["choices"]
    assert len(choice["logprobs"]["content"]) <= 3 and choice["finish_reason"] == "length"


def test_chat_needs_messages(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model="m", messages=[])


def test_a_content_part_whose_text_is_not_a_string_is_a_400_naming_it(base_url: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}
    refused = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "messages" and "messages[0].content" in refused.json()["error"]["message"]


def test_raw_http_errors_have_the_openai_shape(base_url: str) -> None:
    missing = httpx.post(f"{base_url}/engines/davinci/completions", json={})
    assert missing.status_code == 404
    assert missing.json() == {"error": {
        "message": "Invalid URL (POST /v1/engines/davinci/completions)",
        "type": "invalid_request_error", "param": None, "code": None,
    }}
    not_json = httpx.post(f"{base_url}/completions", content=b"{oops", headers={
        "Content-Type": "application/json"})
    assert not_json.status_code == 400 and "JSON object" in not_json.json()["error"]["message"]
    no_model = httpx.post(f"{base_url}/completions", json={"prompt": "x"})
    assert no_model.status_code == 400 and no_model.json()["error"]["param"] == "model"


def test_a_failing_model_is_a_500_server_error() -> None:
    class Broken(DeterministicBackend):
        def generate(self, prompt: str, **kwargs) -> list[Generation]:
            raise RuntimeError("weights missing")

    response = create_app(Broken()).test_client().post(
        "/v1/completions", json={"model": "m", "prompt": "x"}
    )
    assert response.status_code == 500
    assert response.json["error"]["type"] == "server_error"
    assert "weights missing" in response.json["error"]["message"]


class Counting(DeterministicBackend):
    """Counts what the model was asked to do."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def generate(self, prompt: str, **kwargs) -> list[Generation]:
        self.calls += 1
        return super().generate(prompt, **kwargs)


@pytest.mark.parametrize(
    "body, param",
    [
        ({"prompt": ["x"] * 1000}, "prompt"),
        ({"prompt": ["x"] * 16, "n": 16}, "n"),  # 256 completions from a short list
    ],
)
def test_a_flood_of_prompts_is_refused_before_the_model_runs(body, param) -> None:
    backend = Counting()
    response = create_app(backend).test_client().post(
        "/v1/completions", json={"model": "m", "max_tokens": 1, **body}
    )
    assert response.status_code == 400, response.json
    assert response.json["error"]["param"] == param
    assert "at most" in response.json["error"]["message"]
    assert backend.calls == 0


def test_a_flood_of_chat_messages_is_refused() -> None:
    backend = Counting()
    messages = [{"role": "user", "content": "hi"}] * 10_000
    response = create_app(backend).test_client().post(
        "/v1/chat/completions", json={"model": "m", "max_tokens": 1, "messages": messages}
    )
    assert response.status_code == 400 and response.json["error"]["param"] == "messages"
    assert backend.calls == 0


def test_a_small_batch_of_prompts_is_still_served() -> None:
    response = create_app(Counting()).test_client().post(
        "/v1/completions", json={"model": "m", "max_tokens": 2, "prompt": ["a", "b"], "n": 2}
    )
    assert response.status_code == 200 and len(response.json["choices"]) == 4
