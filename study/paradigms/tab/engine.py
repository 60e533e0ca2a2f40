"""Ask the model for suggestions: one query in, the suggestions to show (or a reason) out.

The engine talks to any OpenAI-compatible endpoint (OpenAI itself, vLLM, llama.cpp, or our own
`study lm serve`) through the official `openai` SDK, in one of two modes a condition picks:

- "completion": the document is the prompt of a plain completion, as CoAuthor did with GPT-3
  davinci (App. A.2): the model simply continues the text.
- "chat": for chat-only models; the document is the user message after a system prompt that
  asks for the next sentence, or paragraph for an arm whose `unit` is one.

`suggest` never raises: a participant's page must keep working when the model is slow, down
or misconfigured, so every failure becomes `SuggestionResult.error`, a short sentence for the
researcher's log that never contains the API key.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import openai

from study import model_client
from study.config import Condition, SuggestionSettings
from study.model_client import answered_model, choices, output
from study.suggest.postprocess import postprocess, starts_apart

# CoAuthor's backend cut trailing spaces and tabs off the prompt (GPT tokens carry their
# leading space, so a prompt ending in " " makes the model start oddly) and removed them again
# from the front of each output; newlines stay, because they end paragraphs. At the very end
# (\Z): `$` also matches before a final newline, and cut a text's " \n" to "\n", then a
# suggestion's leading line break as if the model had repeated a blank.
_TRAILING_BLANKS = re.compile(r"[ \t]+\Z")


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
            # A chat-mode call records the system prompt it sends (an opinionated arm's, Jakesch
            # et al.): a release's arms.json gives the one the sessions ran with, not study.toml's.
            # `unit`, how much of each output a suggestion keeps, is not sent: the arm's
            # settings as run (study.export.settings_as_run) read it here.
            parameters={"model": condition.model, "mode": condition.mode, **params, "unit": condition.unit,
                        **({"system_prompt": self.system_prompt(condition)} if condition.mode == "chat" else {})},
        )
        base_url = self.settings.base_url()
        api_key = self.settings.api_key()
        start = time.perf_counter()
        try:
            client = model_client.participant_client(self.settings)
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
            result.error = model_client.describe(exc, self.settings, base_url)
            result.timed_out = isinstance(exc, openai.APITimeoutError)
        result.latency_ms = (time.perf_counter() - start) * 1000
        if result.error is None:
            try:
                result.suggestions = postprocess(result.raw, on_screen, self.settings.blocklist, condition.unit)
            except Exception as exc:  # noqa: BLE001 - e.g. a sentence splitter bug on odd text
                result.error = f"post-processing the model's outputs failed ({exc!r:.200})"
        if result.error is not None:
            result.error = model_client.redact(result.error, api_key)
        return result

    def _completion(
        self, client: openai.OpenAI, condition: Condition, doc: str, params: dict
    ) -> tuple[list[dict], str | None]:
        prompt = _TRAILING_BLANKS.sub("", doc)
        removed = doc[len(prompt) :]
        response = model_client.create(
            client, "/completions", {"model": condition.model, "prompt": prompt, "logprobs": 1, **params}
        )
        raw = [output(*model_client.completion_choice(choice, removed)) for choice in choices(response)]
        return raw, answered_model(response)

    def system_prompt(self, condition: Condition) -> str:
        """What a chat-mode call sends as its system message (SuggestionSettings.system_prompt_for)."""
        return self.settings.system_prompt_for(condition)

    def _chat(
        self, client: openai.OpenAI, condition: Condition, doc: str, params: dict
    ) -> tuple[list[dict], str | None]:
        messages = [
            {"role": "system", "content": self.system_prompt(condition)},
            {"role": "user", "content": doc},
        ]
        response = model_client.create(
            client, "/chat/completions",
            {"model": condition.model, "messages": messages, "logprobs": True, **params},
        )  # fmt: skip
        raw = []
        for choice in choices(response):
            text, values, finish_reason = model_client.chat_choice(choice)
            # A chat reply is a fresh message without the separating space a completion
            # carries; add one so "...the door." + "He left." does not run together, but not
            # before a comma that finishes the writer's sentence.
            if doc and not doc[-1].isspace() and text and starts_apart(doc, text):
                text = " " + text
            raw.append(output(text, values, finish_reason))
        return raw, answered_model(response)
