"""The assistant's reply in a chat study: the conversation in, one message out.

It uses the shared model-call client (`study.model_client`): the same endpoint
settings, key handling and error wording, so a chat study points `[suggestions] endpoint` at
OpenAI, vLLM or `study lm serve` alike. Each condition (assistant) has its own model, decoding
and system prompt (CollabLLM's Base, Proactive Base and CollabLLM arms differ only there).
The participant's pre-writing answers are never part of the conversation (App. E: "the AI has
no access to them"). `reply` never raises: failures become `Reply.error`.

What the model reads is bounded (`window`, `[chat] context_chars`): the system prompt, the
participant's document as it stands in the pane, and the latest turns that fit, so a reply
costs the same at the 8th exchange as at the 1st. `ReplyStream` asks for the reply streamed
(OpenAI's stream=True) and hands the pieces on as they come; its `result` is the whole reply,
or an error that says the stream was cut off and after how much.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import httpx
import openai

from study import model_client
from study.config import Condition, SuggestionSettings
from study.suggest.postprocess import browser_newlines


@dataclass
class Reply:
    text: str
    latency_ms: float
    error: str | None = None
    timed_out: bool = False
    parameters: dict = field(default_factory=dict)
    finish_reason: str | None = None
    answered_model: str | None = None  # as the endpoint's reply names it
    cut_off: bool = False  # a streamed reply that stopped before the endpoint said it was done


@dataclass(frozen=True)
class Window:
    """What the model read for one reply (stored with the model call, stated in the export)."""

    context_chars: int  # the bound ([chat] context_chars; 0: none)
    messages_read: int  # the latest turns sent
    messages_left_out: int  # the earlier turns that did not fit
    document_chars: int  # how much of the document pane was sent (its end, when cut)


DOCUMENT_NOTE = "The document the user is writing, as it stands now:\n\n"


def conversation(condition: Condition, history: list[dict]) -> list[dict]:
    """The messages sent: the condition's system prompt, then the turns in order."""
    return window(condition, history)[0]


def window(
    condition: Condition, history: list[dict], document: str = "", context_chars: int = 0
) -> tuple[list[dict], Window]:
    """The messages sent, their contents within `context_chars` characters in all: the system
    prompt and the newest message always; then the document (its end when it must be cut:
    the end is where the writer works), in at most half of what is left; then the earlier
    turns, newest first, while they fit."""
    newest = history[-1:]
    left = context_chars - len(condition.system_prompt) - sum(len(m["content"]) for m in newest)
    document = document.strip()
    if context_chars:
        room = max(0, left // 2 - len(DOCUMENT_NOTE) - 2)
        document = document[len(document) - room :] if room else ""
    system = condition.system_prompt
    if document:
        system = (system + "\n\n" if system else "") + DOCUMENT_NOTE + document
        left -= len(system) - len(condition.system_prompt)
    turns = [{"role": m["role"], "content": m["content"]} for m in newest]
    for message in reversed(history[:-1]):
        if context_chars and len(message["content"]) > left:
            break
        turns.insert(0, {"role": message["role"], "content": message["content"]})
        left -= len(message["content"])
    messages = ([{"role": "system", "content": system}] if system else []) + turns
    return messages, Window(context_chars, len(turns), len(history) - len(turns), len(document))


def call_parameters(condition: Condition, max_tokens: int, read: Window | None = None) -> dict:
    """The call as stored in suggestion_requests.parameters, with the condition's system prompt
    (without the document `window` adds to it: that is the conversation's, not a setting).

    The prompt is stored whole with every call, not as a hash beside a table of texts: the
    call's row alone then says what was sent, with no second table for copies, backups and
    databases from before to keep in step. It costs a few KB a reply (CollabLLM's is ~3 KB), as
    much as the reply's own text, which the row already holds twice (raw, suggestions)."""
    out = {
        "model": condition.model, "system_prompt": condition.system_prompt, "mode": "chat_reply",
        "max_tokens": max_tokens,
        "temperature": condition.temperature, "top_p": condition.top_p,
        "presence_penalty": condition.presence_penalty,
        "frequency_penalty": condition.frequency_penalty,
    }  # fmt: skip
    return {**out, "window": asdict(read)} if read is not None else out


def reply(
    settings: SuggestionSettings, condition: Condition, history: list[dict], max_tokens: int,
    messages: list[dict] | None = None, read: Window | None = None,
) -> Reply:
    """One reply, not streamed; `messages` (from `window`) default to the whole conversation.

    Sent and read as plain JSON (study.model_client.create), as Tab's and ghost text's calls
    are: the SDK's typed request costs CPU in proportion to the conversation (its check of every
    message took 6 ms of a 20-exchange chat arm's message), all of it while the request holds
    the GIL from the other writers' requests."""
    base_url = settings.base_url()
    start = time.perf_counter()
    result = Reply(text="", latency_ms=0.0, parameters=call_parameters(condition, max_tokens, read))
    try:
        client = model_client.participant_client(settings)
        response = model_client.create(client, "/chat/completions", {
            "model": condition.model,
            "messages": messages if messages is not None else conversation(condition, history),
            "max_tokens": max_tokens, "temperature": condition.temperature, "top_p": condition.top_p,
            "presence_penalty": condition.presence_penalty, "frequency_penalty": condition.frequency_penalty,
        })  # fmt: skip
        text, _, result.finish_reason = model_client.chat_choice(model_client.first_choice(response))
        result.answered_model = model_client.answered_model(response)
        result.text = browser_newlines(text.strip())
        if not result.text:
            result.error = f"the model endpoint sent an empty reply ({condition.model})"
    except Exception as exc:  # noqa: BLE001 - the participant's page must get an answer
        result.error = model_client.failure(exc, settings, base_url)
        result.timed_out = isinstance(exc, openai.APITimeoutError)
    result.latency_ms = (time.perf_counter() - start) * 1000
    return result


class ReplyStream:
    """One reply, streamed: iterate for its pieces; once iteration ends, `result` holds the
    whole reply (the text, as the endpoint finished it) or the reason it failed.

    A silence longer than `[suggestions] timeout_seconds` ends it, and so does a whole reply
    taking twice that: the participant sees the reply grow meanwhile, so a slow but steady
    model is let finish where a silent one is not. Ending closes the stream, which tells the
    endpoint to stop generating (study.lm.streaming)."""

    def __init__(
        self, settings: SuggestionSettings, condition: Condition, messages: list[dict],
        max_tokens: int, read: Window | None = None,
    ) -> None:
        self.settings, self.condition, self.messages, self.max_tokens = settings, condition, messages, max_tokens
        self.result = Reply(text="", latency_ms=0.0, parameters=call_parameters(condition, max_tokens, read))

    def __iter__(self) -> Iterator[str]:
        settings, condition, result = self.settings, self.condition, self.result
        base_url, timeout = settings.base_url(), float(settings.timeout_seconds)
        start = time.perf_counter()
        try:
            client = model_client.participant_client(settings)
            stream = client.chat.completions.create(
                model=condition.model, messages=self.messages, max_tokens=self.max_tokens,
                temperature=condition.temperature, top_p=condition.top_p,
                presence_penalty=condition.presence_penalty,
                frequency_penalty=condition.frequency_penalty, stream=True,
            )  # fmt: skip
            with stream:  # leaving closes the connection: the endpoint stops generating
                for chunk in stream:
                    result.answered_model = result.answered_model or model_client.answered_model(chunk)
                    choice = chunk.choices[0] if chunk.choices else None
                    piece = (choice.delta.content or "") if choice is not None else ""
                    if piece:
                        result.text += piece
                        yield piece
                    if choice is not None and choice.finish_reason:
                        result.finish_reason = choice.finish_reason
                    if time.perf_counter() - start > 2 * timeout:
                        raise openai.APITimeoutError(request=stream.response.request)
            if result.finish_reason is None:
                raise ConnectionError("the stream ended before the reply was finished")
            result.text = browser_newlines(result.text.strip())
            if not result.text:
                result.error = f"the model endpoint sent an empty reply ({condition.model})"
        except Exception as exc:  # noqa: BLE001 - the participant's page must get an answer
            result.timed_out = isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException))
            result.error = model_client.failure(exc, settings, base_url)
            if result.text:
                result.cut_off = True
                result.error = f"the reply was cut off after {len(result.text)} characters: {result.error}"
        result.latency_ms = (time.perf_counter() - start) * 1000
