"""One way to call a model: every model call the toolkit makes goes through here.

Tab suggestions (study.paradigms.tab.engine), proactive ghost text (study.paradigms.proactive.engine),
the chat assistant's replies (study.paradigms.chat.assistant), LLM judges (study.metrics.judges.client)
and simulated writers (study.simulate.run) all talk to an OpenAI-compatible endpoint (OpenAI,
vLLM, llama.cpp or our own `study lm serve`) through the official `openai` SDK. This module is
what they share:

- `client()`: build (once per endpoint) a client with a time limit on the whole answer and a
  retry limit;
  `participant_client()`: the one the participants' calls use;
- `create()`: one call answered as plain JSON read by attribute (Tab, ghost text and chat
  replies), and `first_choice()`, `chat_choice()`, `completion_choice()` to read its answer;
- `describe()`: a failed call as one sentence for the researcher, naming where to look;
- `redact()`: the API key cut out of any message, because an endpoint can echo it back;
- `answered_model()`: the model the endpoint says answered (a reply's `model`), which may
  name a version of the configured alias ("gpt-4o" answered by "gpt-4o-2024-08-06");
- `output()`: one generated text as the session log keeps it (text, summed logprob, finish);
- `retry_after()`: whether a failure will pass (the endpoint is loading its model, or busy),
  and in how many seconds to ask again;
- `unusable()`: why every call would fail, found before anyone asks (`study serve`'s start).

The server's own limits on model calls (how many in flight, per minute) live in
study.server.model_calls; this module knows nothing about participants or requests.
"""

from __future__ import annotations

import json
import math
import os
import time
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import httpx

from study import precedence
from study.config import SuggestionSettings

if TYPE_CHECKING:  # imported where a client is built or a failure read (`client`, `describe`)
    import openai


class MalformedResponse(ValueError):
    """The endpoint answered, but not in the shape the OpenAI API promises."""


@lru_cache(maxsize=8)
def client(base_url: str | None, api_key: str, timeout: float, max_retries: int = 0) -> openai.OpenAI:
    """The client for one endpoint, built once (so one connection pool per endpoint).

    Participant-facing calls keep the SDK's retries off (the default): a writer waiting for a
    suggestion is better served by a fast error than by a second 15 s wait. Batch callers
    (judges, simulated writers) pass a few retries."""
    # The SDK's own client but for the hooks: its pool (up to 1,000 calls at once, as many as
    # [suggestions] concurrent_requests allows) and its redirects.
    http_client = httpx.Client(
        timeout=timeout, follow_redirects=True,
        limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
        event_hooks={"request": [_start_clock], "response": [_limit_whole_answer]},
    )  # fmt: skip
    import openai  # here, not above: 1.3 s that commands which only read a URL (study status) skip

    return openai.OpenAI(
        base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, http_client=http_client
    )


# The SDK's time limit is httpx's, which bounds each read from the socket, not the answer: an
# endpoint that sends a byte now and then (a proxy's keep-alive spaces, a stalled stream's SSE
# comments) kept its call, and the participant's model-call slot, for as long as it went on,
# past the time the study counts a call as in flight (study.server.model_calls). The whole
# answer now has the time limit, counted from the request; a streamed reply twice it, as
# study.paradigms.chat.assistant.ReplyStream lets a steady one run. Past it the next piece
# raises httpx's read timeout, which the SDK reports as the call's timeout.
_STARTED = "study.started"


def _start_clock(request: httpx.Request) -> None:
    request.extensions[_STARTED] = time.monotonic()


def _limit_whole_answer(response: httpx.Response) -> None:
    request = response.request
    limit = request.extensions.get("timeout", {}).get("read")
    if limit is None:
        return
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        limit *= 2
    response.stream = _AnswerWithin(response.stream, request.extensions[_STARTED] + limit, request)


class _AnswerWithin(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, deadline: float, request: httpx.Request) -> None:
        self.stream, self.deadline, self.request = stream, deadline, request

    def __iter__(self):
        for piece in self.stream:
            if time.monotonic() > self.deadline:
                raise httpx.ReadTimeout("the answer took longer than the time limit", request=self.request)
            yield piece

    def close(self) -> None:
        self.stream.close()


def participant_client(settings: SuggestionSettings) -> openai.OpenAI:
    """The client every participant-facing call uses ([suggestions]' endpoint, key and time
    limit, no retries): Tab, ghost text, L0's panel and the chat assistant, and `study serve`'s
    warm-up before its workers fork (study.server.model_calls.warm_up), which must build this
    same one."""
    return client(settings.base_url(), settings.api_key(), float(settings.timeout_seconds))


def create(client: openai.OpenAI, path: str, body: dict) -> SimpleNamespace:
    """POST `body` to the endpoint's `path` ("/completions", "/chat/completions") through the
    SDK, which still sends it (base URL, key, time limit, retries) and raises its errors for a
    failure, and read the answer as plain JSON whose fields are attributes, as on the SDK's
    reply objects. `client.completions.create()` also builds the SDK's typed request and reply
    models: about 1 ms of CPU of a Tab request's 5 on the server, which every writer's
    suggestion spends while the others' keystrokes wait (docs/benchmarks.md)."""
    with precedence.waiting_for_model():
        content = client.post(path, body=body, cast_to=bytes)
    try:
        return json.loads(content, object_hook=lambda fields: SimpleNamespace(**fields))
    except ValueError:
        raise MalformedResponse("it is not JSON") from None


def answered_model(response: object) -> str | None:
    model = getattr(response, "model", None)
    return model[:128] if isinstance(model, str) and model else None


def choices(response: object) -> list:
    found = getattr(response, "choices", None)
    if not isinstance(found, list):
        raise MalformedResponse("it has no list of choices")
    return found


def field(obj: object, name: str, kind: type) -> object:
    """`obj.name` if it is a `kind` (or `kind()` when absent); MalformedResponse otherwise."""
    value = getattr(obj, name, None)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise MalformedResponse(f"{name} is {type(value).__name__}, not {kind.__name__}")
    return value


def first_choice(response: object) -> object:
    """The first of `choices`, for the calls that ask for one; MalformedResponse when none came."""
    found = choices(response)
    if not found:
        raise MalformedResponse("its list of choices is empty")
    return found[0]


def chat_choice(choice: object) -> tuple[str, list | None, str | None]:
    """A chat completion's choice read from `create()`'s answer: (its message's text, its
    tokens' logprobs or None, its finish reason)."""
    message = getattr(choice, "message", None)
    text = field(message, "content", str) if message is not None else ""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    values = [getattr(item, "logprob", None) for item in content] if content else None
    return text, values, getattr(choice, "finish_reason", None)


def completion_choice(choice: object, removed: str = "") -> tuple[str, list | None, str | None]:
    """A completion's choice read from `create()`'s answer, as `chat_choice`. `removed`: the
    blanks cut off the prompt's end, taken off the text's start when the model repeats them."""
    text = field(choice, "text", str)
    if removed and text.startswith(removed):
        text = text[len(removed) :]
    logprobs = getattr(choice, "logprobs", None)
    values = getattr(logprobs, "token_logprobs", None) if logprobs else None
    return text, values, getattr(choice, "finish_reason", None)


def output(text: str, token_logprobs: list | None, finish_reason: str | None) -> dict:
    """One generated text as the log keeps it: {text, logprob_sum, finish_reason}."""
    if token_logprobs is not None and not all(
        isinstance(v, (int, float)) and math.isfinite(v) for v in token_logprobs
    ):
        token_logprobs = None  # some servers send null for tokens they cannot score
    return {
        "text": text,
        "logprob_sum": math.fsum(token_logprobs) if token_logprobs is not None else None,
        "finish_reason": finish_reason,
    }


# When a 503 names no Retry-After: `study lm serve` loading SmolLM2 takes tens of seconds.
DEFAULT_RETRY_SECONDS = 5.0


def retry_after(exc: Exception) -> float | None:
    """Seconds to wait before asking again when `exc` is a failure that passes by itself (HTTP
    503: the endpoint is starting or its model still loading; 429: a rate limit), from the
    answer's Retry-After header; None for a failure that asking again will not mend."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (429, 503):
        return None
    try:
        seconds = float(exc.response.headers.get("retry-after", ""))
    except ValueError:
        return DEFAULT_RETRY_SECONDS
    return min(max(seconds, 0.5), 60.0)


def describe(exc: Exception, settings: SuggestionSettings, base_url: str | None) -> str:
    """A sentence for the researcher: what went wrong and where to look (not yet redacted as a
    whole; what it shortens is redacted first)."""
    import openai

    where = safe_url(base_url) if base_url else "the OpenAI API"
    if isinstance(exc, openai.APITimeoutError):
        return f"the model endpoint did not answer within {settings.timeout_seconds:g} s ({where})"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot reach the model endpoint at {where}; is it running?"
    if isinstance(exc, openai.AuthenticationError):
        return (
            f"the model endpoint at {where} refused the API key (HTTP 401); "
            f"check the environment variable {settings.api_key_env}"
        )
    if isinstance(exc, openai.RateLimitError):
        return f"the model endpoint at {where} is rate-limiting or out of quota (HTTP 429)"
    if isinstance(exc, openai.APIStatusError):
        return f"the model endpoint at {where} answered HTTP {exc.status_code}: {_message(exc, settings.api_key())}"
    if isinstance(exc, (MalformedResponse, openai.APIResponseValidationError)):
        return f"the model endpoint at {where} sent a malformed response: {exc}"
    return f"the suggestion request failed ({type(exc).__name__}: {redact(str(exc), settings.api_key())[:200]})"


def failure(exc: Exception, settings: SuggestionSettings, base_url: str | None) -> str:
    """`describe()` with the study's API key redacted: what goes to logs and the database."""
    return redact(describe(exc, settings, base_url), settings.api_key())


def _message(exc: openai.APIStatusError, api_key: str) -> str:
    # The SDK puts the parsed OpenAI error body in exc.body; fall back to its own message.
    # Redacted before it is shortened: a cut through an echoed key would leave its start.
    body = exc.body
    if isinstance(body, dict):
        body = body.get("error", body)
        if isinstance(body, dict) and body.get("message"):
            return redact(str(body["message"]), api_key)[:200]
    return redact(str(exc.message), api_key)[:200]


def safe_url(url: str) -> str:
    """The URL without user:password, which some proxies take in the address."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)


def redact(message: str, api_key: str) -> str:
    # Belt and braces: an endpoint can echo the key back in its error body.
    if api_key and api_key != "no-key" and len(api_key) >= 4:
        message = message.replace(api_key, "[redacted]")
    return message


def unusable(settings: SuggestionSettings, wait: float = 3.0) -> tuple[str, str] | None:
    """Why every model call of the study would fail, and the fix, found before a participant
    asks: no endpoint and no key for the OpenAI API the calls then go to (a study.toml from
    `study init` whose [suggestions] nobody pointed at a model), or an endpoint that does not
    answer within `wait` seconds. None when the endpoint answers at all (any HTTP status: a
    model name it does not serve is told by the first call, since `study lm serve` answers
    every name)."""
    base_url = settings.base_url()
    if base_url is None:
        if os.environ.get(settings.api_key_env):
            return None
        return (
            "[suggestions] endpoint is empty and OPENAI_BASE_URL is not set, so model calls go "
            f"to the OpenAI API, and the environment variable {settings.api_key_env} holding its "
            "key is not set",
            "set [suggestions] endpoint to your model's OpenAI-compatible URL (`study lm serve` "
            f"runs a local one at http://127.0.0.1:8001/v1), or set {settings.api_key_env}",
        )
    try:
        httpx.get(base_url.rstrip("/") + "/models", timeout=wait)
    except httpx.HTTPError as error:
        named = "[suggestions] endpoint" if settings.endpoint else "OPENAI_BASE_URL"
        return (
            f"the model endpoint at {safe_url(base_url)} ({named}) does not answer "
            f"({type(error).__name__})",
            f"start it before participants come, or correct {named}",
        )
    return None
