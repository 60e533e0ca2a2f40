"""Ask the model for suggestions: one query in, the suggestions to show (or a reason) out.

The engine talks to any OpenAI-compatible endpoint (OpenAI itself, vLLM, llama.cpp, or our own
`study lm serve`) through the official `openai` SDK, in one of two modes a condition picks:

- "completion": the document is the prompt of a plain completion, as CoAuthor did with GPT-3
  davinci (App. A.2): the model simply continues the text.
- "chat": for chat-only models; the document is the user message after a system prompt that
  asks for the next sentence.

`suggest` never raises: a participant's page must keep working when the model is slow, down
or misconfigured, so every failure becomes `SuggestionResult.error`, a short sentence for the
researcher's log that never contains the API key.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

import openai

from study.config import Condition, SuggestionSettings
from study.suggest.postprocess import postprocess

# CoAuthor's backend cut trailing spaces and tabs off the prompt (GPT tokens carry their
# leading space, so a prompt ending in " " makes the model start oddly) and removed them again
# from the front of each output; newlines stay, because they end paragraphs.
_TRAILING_BLANKS = re.compile(r"[ \t]+$")


@dataclass
class SuggestionResult:
    """What one query produced, with what was sent, for the session log."""

    suggestions: list[dict]
    raw: list[dict]
    latency_ms: float
    error: str | None
    model: str
    mode: str
    # Everything that was sent besides the text: model, mode and the decoding parameters.
    parameters: dict = field(default_factory=dict)
    # True when the endpoint did not answer in time (the API answers 504 rather than 502).
    timed_out: bool = False
    # The model the endpoint says answered (its reply's `model`), which may name a version of
    # the configured alias (e.g. "gpt-4o" answered by "gpt-4o-2024-08-06"); None without a reply.
    answered_model: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=8)
def _client(base_url: str | None, api_key: str, timeout: float) -> openai.OpenAI:
    # One client (and so one connection pool) per endpoint; the SDK's own retries are off
    # because a writer waiting for suggestions is better served by a fast error than by a
    # second 15 s wait.
    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


class SuggestionEngine:
    """Queries the configured endpoint and post-processes the answer (App. A.3)."""

    def __init__(self, settings: SuggestionSettings) -> None:
        self.settings = settings

    def suggest(
        self, condition: Condition, doc: str, on_screen: Sequence[str] = ()
    ) -> SuggestionResult:
        params = {
            "n": condition.n,
            "max_tokens": condition.max_tokens,
            "temperature": condition.temperature,
            "top_p": condition.top_p,
            "presence_penalty": condition.presence_penalty,
            "frequency_penalty": condition.frequency_penalty,
        }
        result = SuggestionResult(
            suggestions=[], raw=[], latency_ms=0.0, error=None,
            model=condition.model, mode=condition.mode,
            parameters={"model": condition.model, "mode": condition.mode, **params},
        )
        base_url = self.settings.base_url()
        api_key = self.settings.api_key()
        start = time.perf_counter()
        try:
            client = _client(base_url, api_key, float(self.settings.timeout_seconds))
            if condition.mode == "chat":
                result.raw, result.answered_model = self._chat(client, condition, doc, params)
            elif condition.mode == "completion":
                result.raw, result.answered_model = self._completion(client, condition, doc, params)
            else:
                result.error = (
                    f"condition '{condition.name}' has mode '{condition.mode}'; "
                    'use "completion" or "chat"'
                )
        except Exception as exc:  # noqa: BLE001 - the page must never see an exception
            result.error = _describe(exc, self.settings, base_url)
            result.timed_out = isinstance(exc, openai.APITimeoutError)
        result.latency_ms = (time.perf_counter() - start) * 1000
        if result.error is None:
            try:
                result.suggestions = postprocess(result.raw, on_screen, self.settings.blocklist)
            except Exception as exc:  # noqa: BLE001 - e.g. a sentence splitter bug on odd text
                result.error = f"post-processing the model's outputs failed ({exc!r:.200})"
        if result.error is not None:
            result.error = _redact(result.error, api_key)
        return result

    def _completion(
        self, client: openai.OpenAI, condition: Condition, doc: str, params: dict
    ) -> tuple[list[dict], str | None]:
        prompt = _TRAILING_BLANKS.sub("", doc)
        removed = doc[len(prompt) :]
        response = client.completions.create(
            model=condition.model, prompt=prompt, logprobs=1, **params
        )
        raw = []
        for choice in _choices(response):
            text = _field(choice, "text", str)
            if removed and text.startswith(removed):
                text = text[len(removed) :]
            logprobs = getattr(choice, "logprobs", None)
            values = getattr(logprobs, "token_logprobs", None) if logprobs else None
            raw.append(_raw(text, values, getattr(choice, "finish_reason", None)))
        return raw, _answered_model(response)

    def _chat(
        self, client: openai.OpenAI, condition: Condition, doc: str, params: dict
    ) -> tuple[list[dict], str | None]:
        response = client.chat.completions.create(
            model=condition.model,
            messages=[
                {"role": "system", "content": self.settings.system_prompt},
                {"role": "user", "content": doc},
            ],
            logprobs=True,
            **params,
        )
        raw = []
        for choice in _choices(response):
            message = getattr(choice, "message", None)
            text = _field(message, "content", str) if message is not None else ""
            # A chat reply is a fresh message without the separating space a completion
            # carries; add one so "...the door." + "He left." does not run together.
            if doc and not doc[-1].isspace() and text and not text[0].isspace():
                text = " " + text
            content = getattr(getattr(choice, "logprobs", None), "content", None)
            values = [getattr(item, "logprob", None) for item in content] if content else None
            raw.append(_raw(text, values, getattr(choice, "finish_reason", None)))
        return raw, _answered_model(response)


def _answered_model(response: object) -> str | None:
    model = getattr(response, "model", None)
    return model[:128] if isinstance(model, str) and model else None


class MalformedResponse(ValueError):
    pass


def _choices(response: object) -> list:
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise MalformedResponse("it has no list of choices")
    return choices


def _field(obj: object, name: str, kind: type) -> object:
    value = getattr(obj, name, None)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise MalformedResponse(f"{name} is {type(value).__name__}, not {kind.__name__}")
    return value


def _raw(text: str, token_logprobs: list | None, finish_reason: str | None) -> dict:
    if token_logprobs is not None and not all(
        isinstance(v, (int, float)) and math.isfinite(v) for v in token_logprobs
    ):
        token_logprobs = None  # some servers send null for tokens they cannot score
    return {
        "text": text,
        "logprob_sum": math.fsum(token_logprobs) if token_logprobs is not None else None,
        "finish_reason": finish_reason,
    }


def _describe(exc: Exception, settings: SuggestionSettings, base_url: str | None) -> str:
    """A sentence for the researcher: what went wrong and where to look."""
    where = _safe_url(base_url) if base_url else "the OpenAI API"
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
        return f"the model endpoint at {where} answered HTTP {exc.status_code}: {_message(exc)}"
    if isinstance(exc, (MalformedResponse, openai.APIResponseValidationError)):
        return f"the model endpoint at {where} sent a malformed response: {exc}"
    return f"the suggestion request failed ({type(exc).__name__}: {str(exc)[:200]})"


def _message(exc: openai.APIStatusError) -> str:
    # The SDK puts the parsed OpenAI error body in exc.body; fall back to its own message.
    body = exc.body
    if isinstance(body, dict):
        body = body.get("error", body)
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])[:200]
    return str(exc.message)[:200]


def _safe_url(url: str) -> str:
    """The URL without user:password, which some proxies take in the address."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)


def _redact(message: str, api_key: str) -> str:
    # Belt and braces: an endpoint can echo the key back in its error body.
    if api_key and api_key != "no-key" and len(api_key) >= 4:
        message = message.replace(api_key, "[redacted]")
    return message
