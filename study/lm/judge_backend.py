"""`study lm serve --backend judge`: the deterministic judge behind the OpenAI wire protocol.

A test or an offline demo points `study curate proactive` or `study curate chat`
`--judge-endpoint` at it, and the real
judge client (study.metrics.judges.client) talks to it over HTTP. Its answers come from
study.metrics.judges.deterministic and are NOT LLM judgements.
"""

from __future__ import annotations

from collections.abc import Sequence

from study.lm.backends import Generation
from study.metrics.judges.deterministic import answer


class JudgeBackend:
    model_id = "deterministic-judge"

    def generate(self, prompt: str, *, n: int = 1, max_tokens: int = 16, **_ignored) -> list[Generation]:
        text = answer(prompt)
        # The whole answer whatever max_tokens says: a cut JSON verdict is useless to a judge.
        return [Generation(text, [0.0], "stop", [text]) for _ in range(n)]

    def format_chat(self, messages: Sequence[dict]) -> str:
        return "\n".join(m["content"] for m in messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())
