"""Which backend `study lm serve --backend NAME` means: auto, smollm2, deterministic or judge.

Its own module so that the backends (study.lm.backends, study.lm.smollm2,
study.lm.judge_backend) import only the shared interface and never each other.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from study.lm.backends import Backend, DeterministicBackend, Generation


def load_backend(name: str = "auto", delay: float = 0.0) -> Backend:
    """`auto` picks SmolLM2 when the extra is installed, else the deterministic backend."""
    from study.lm import smollm2  # imports torch only when SmolLM2 is asked for

    if name == "auto":
        name = "smollm2" if smollm2.available() else "deterministic"
    if name == "deterministic":
        return DeterministicBackend(delay=delay)
    if name == "smollm2":
        return _Delayed(smollm2.SmolLM2Backend(), delay) if delay else smollm2.SmolLM2Backend()
    if name == "judge":  # the deterministic HAR/KED/ITR judge (study.lm.judge_backend), for tests
        from study.lm.judge_backend import JudgeBackend

        return JudgeBackend()
    raise ValueError(f"unknown backend '{name}'; use auto, smollm2, deterministic or judge")


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
