"""The assistant's reply in a chat study: the conversation in, one message out.

It uses the shared model-call client (`study.model_client`): the same endpoint
settings, key handling and error wording, so a chat study points `[suggestions] endpoint` at
OpenAI, vLLM or `study lm serve` alike. Each condition (assistant) has its own model, decoding
and system prompt (CollabLLM's Base, Proactive Base and CollabLLM arms differ only there).
The participant's pre-writing answers are never part of the conversation (App. E: "the AI has
no access to them"). `reply` never raises: failures become `Reply.error`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import openai

from study import model_client
from study.config import Condition, SuggestionSettings


@dataclass
class Reply:
    text: str
    latency_ms: float
    error: str | None = None
    timed_out: bool = False
    parameters: dict = field(default_factory=dict)
    finish_reason: str | None = None
    answered_model: str | None = None  # as the endpoint's reply names it


def conversation(condition: Condition, history: list[dict], history_chars: int | None = None) -> list[dict]:
    """The messages sent: the condition's system prompt, then the turns in order; with
    `history_chars` ([chat] history_chars), only the latest turns that fit in that many
    characters, the newest always whole, so a long conversation never sends the model an
    unbounded text (issue 24)."""
    messages = [{"role": "system", "content": condition.system_prompt}] if condition.system_prompt else []
    turns = [{"role": m["role"], "content": m["content"]} for m in history]
    if history_chars is not None:
        kept, used = [], 0
        for turn in reversed(turns):
            used += len(turn["content"])
            if kept and used > history_chars:
                break
            kept.append(turn)
        turns = kept[::-1]
    return messages + turns


def reply(
    settings: SuggestionSettings, condition: Condition, history: list[dict], max_tokens: int,
    history_chars: int | None = None,
) -> Reply:
    parameters = {
        "model": condition.model, "mode": "chat_reply", "max_tokens": max_tokens,
        "temperature": condition.temperature, "top_p": condition.top_p,
        "presence_penalty": condition.presence_penalty,
        "frequency_penalty": condition.frequency_penalty,
    }  # fmt: skip
    base_url, api_key = settings.base_url(), settings.api_key()
    start = time.perf_counter()
    result = Reply(text="", latency_ms=0.0, parameters=parameters)
    try:
        client = model_client.client(base_url, api_key, float(settings.timeout_seconds))
        response = client.chat.completions.create(
            model=condition.model,
            messages=conversation(condition, history, history_chars),
            max_tokens=max_tokens,
            temperature=condition.temperature,
            top_p=condition.top_p,
            presence_penalty=condition.presence_penalty,
            frequency_penalty=condition.frequency_penalty,
        )
        choice = response.choices[0]
        result.answered_model = model_client.answered_model(response)
        result.text = (choice.message.content or "").strip()
        result.finish_reason = choice.finish_reason
        if not result.text:
            result.error = f"the model endpoint sent an empty reply ({condition.model})"
    except Exception as exc:  # noqa: BLE001 - the participant's page must get an answer
        result.error = model_client.failure(exc, settings, base_url)
        result.timed_out = isinstance(exc, openai.APITimeoutError)
    result.latency_ms = (time.perf_counter() - start) * 1000
    return result
