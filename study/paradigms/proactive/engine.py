"""One proactive query (L1-L3): the prompt, the model call, post-processing, the record.

The model is any OpenAI-compatible endpoint, reached with the same client as Tab suggestions
(study.model_client). In "chat" mode the system prompt is Completion_L1 or Completion_L2
(MindCopilot App. H; our own wording, the paper's text is not available) and the user message
is the context; a model may answer `{"rationale": ..., "continuation": ...}` (Fig. 7's
assistant log) or plain text. In "completion" mode the context itself is the prompt (L2: the
snapshot, then the local window to continue).

Post-processing (spec C3.3): the first sentence only (unless `unit = "span"`), the writer's
last words removed when the model repeats them (HAR rule 1, start repetition), and an empty
result is a failure, never an empty ghost.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import openai

from study import model_client
from study.config import Condition, SuggestionSettings
from study.model_client import answered_model, output
from study.suggest.postprocess import blocked_term, browser_newlines, first_sentence, probability, starts_apart
from study.paradigms.proactive import context as ctx
from study.paradigms.proactive import policy
from study.paradigms.proactive.settings import ProactiveSettings

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass
class ProactiveResult:
    """One proactive suggestion with everything spec A2.6 asks to keep about it."""

    suggestion: str
    rationale: str
    probability: float | None  # of the model's whole output, as Tab suggestions (App. A.3)
    paradigm: str
    strategy: str  # the builder used: "L1" (local window) or "L2" (snapshot)
    stage: str | None
    idle_ms: int | None  # the threshold the editor will use next (L3), for the log
    max_tokens: int
    context: str
    prompt_hash: str
    raw: list[dict] = field(default_factory=list)
    latency_ms: float = 0.0
    error: str | None = None
    timed_out: bool = False
    retry_after: float | None = None  # a failure that passes (the model still loading): ask again then
    parameters: dict = field(default_factory=dict)
    answered_model: str | None = None  # as the endpoint's reply names it

    def to_dict(self) -> dict:
        return asdict(self)


def build_context(
    doc: str, history: Sequence[ctx.HistoryItem], strategy: str, settings: ProactiveSettings
) -> str:
    if strategy == "L2":
        return ctx.snapshot(doc, history, settings.history_cap, settings.history_text_chars)
    return ctx.local_window(doc, settings.context_chars)


def strip_repetition(doc: str, text: str) -> str:
    """Drop a start that repeats the end of the writer's text (HAR rule 1)."""
    lead = text[: len(text) - len(text.lstrip())]
    body = text.lstrip()
    tail = doc.rstrip()
    for size in range(min(len(body), len(tail)), 3, -1):
        # Words the writer wrote, not the end of one: " side by side" after "outside" is new.
        inside_word = size < len(tail) and tail[-size - 1].isalnum() and body[0].isalnum()
        if tail.endswith(body[:size]) and not inside_word:
            rest = body[size:]
            return (lead if rest and not rest[0].isspace() else "") + rest
    return text


def clean(doc: str, text: str, settings: ProactiveSettings, fresh: bool = True) -> str:
    """The ghost text to append to `doc`. `fresh`: the model wrote a new message (chat mode),
    which lacks the separating space a continuation carries, so one is added; a completion
    (fresh=False) keeps its own spacing, as Tab's do: one without a leading space finishes the
    word the writer paused in ("light" + "house")."""
    text = strip_repetition(doc, browser_newlines(text))
    if settings.unit == "sentence":
        text = first_sentence(text)
    text = text.rstrip()
    if fresh and doc and not doc[-1].isspace() and text and starts_apart(doc, text):
        text = " " + text
    return text if text.strip() else ""


def parse_output(text: str) -> tuple[str, str]:
    """(continuation, rationale) from a structured `{rationale, continuation}` answer, or the
    whole text as the continuation when the model answered in plain text."""
    match = _JSON_OBJECT.search(text)
    if match:
        try:
            data = json.loads(match.group())
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("continuation"), str):
            return data["continuation"], str(data.get("rationale", ""))
    return text, ""


class ProactiveEngine:
    def __init__(self, suggestions: SuggestionSettings, settings: ProactiveSettings) -> None:
        self.suggestions = suggestions
        self.settings = settings

    def suggest(
        self,
        condition: Condition,
        doc: str,
        history: Sequence[ctx.HistoryItem] = (),
        outcomes: Sequence[str] = (),
        kept_words: Sequence[int] = (),
        prompt: str = "",
    ) -> ProactiveResult:
        paradigm = condition.paradigm
        stage = idle = None
        strategy, max_tokens = ("L2" if paradigm == "L2" else "L1"), condition.max_tokens
        if paradigm == "L3":
            plan = policy.plan(doc, outcomes, kept_words, condition.max_tokens, self.settings, prompt)
            stage, strategy, idle, max_tokens = (
                plan.stage, plan.strategy, plan.idle_ms, plan.max_tokens
            )
        context = build_context(doc, history, strategy, self.settings)
        system = self.settings.system_prompt_l2 if strategy == "L2" else self.settings.system_prompt_l1
        params = {
            "max_tokens": max_tokens,
            "temperature": condition.temperature,
            "top_p": condition.top_p,
            "presence_penalty": condition.presence_penalty,
            "frequency_penalty": condition.frequency_penalty,
        }
        prompt_text = system + "\x00" + context if condition.mode == "chat" else context
        result = ProactiveResult(
            suggestion="", rationale="", probability=None, paradigm=paradigm, strategy=strategy, stage=stage,
            idle_ms=idle, max_tokens=max_tokens, context=context,
            prompt_hash=hashlib.sha256(prompt_text.encode()).hexdigest()[:16],
            parameters={"model": condition.model, "mode": condition.mode, "n": 1, **params},
        )
        base_url = self.suggestions.base_url()
        start = time.perf_counter()
        try:
            client = model_client.participant_client(self.suggestions)
            raw, result.answered_model = self._ask(client, condition, system, context, params)
            result.raw = [raw]
            text = raw["text"]
            if raw["logprob_sum"] is not None:
                result.probability = probability([raw["logprob_sum"]])
            continuation, result.rationale = parse_output(text)
            result.suggestion = clean(doc, continuation, self.settings, fresh=condition.mode == "chat")
            if not result.suggestion:
                result.error = "the model's answer was empty after post-processing"
            elif blocked_term(result.suggestion, self.suggestions.blocklist):
                result.error, result.suggestion = "the suggestion was blocked by the blocklist", ""
        except Exception as exc:  # noqa: BLE001 - the page must never see an exception
            result.error = model_client.failure(exc, self.suggestions, base_url)
            result.timed_out = isinstance(exc, openai.APITimeoutError)
            result.retry_after = model_client.retry_after(exc)
        result.latency_ms = (time.perf_counter() - start) * 1000
        return result

    def _ask(self, client, condition: Condition, system: str, context: str, params: dict) -> dict:
        """The model's one output as {text, logprob_sum, finish_reason}, and the model that
        answered. Read as plain JSON (study.model_client.create), as Tab's are: the SDK's
        typed replies cost a ghost text about 1 ms of CPU while other writers' keystrokes wait."""
        if condition.mode == "chat":
            messages = [{"role": "system", "content": system}, {"role": "user", "content": context}]
            response = model_client.create(
                client, "/chat/completions",
                {"model": condition.model, "messages": messages, "n": 1, "logprobs": True, **params},
            )  # fmt: skip
            return output(*model_client.chat_choice(model_client.first_choice(response))), answered_model(response)
        prompt = context.rstrip(" \t")
        response = model_client.create(
            client, "/completions", {"model": condition.model, "prompt": prompt, "n": 1, "logprobs": 1, **params}
        )
        read = model_client.completion_choice(model_client.first_choice(response), removed=context[len(prompt) :])
        return output(*read), answered_model(response)
