"""An LLM judge on any OpenAI-compatible endpoint, with every judgement cached on disk.

The cache key is the SHA-256 of (model, template version, messages, temperature): asking the
same question of the same judge again reads `<cache>/<key[:2]>/<key>.json` instead of paying
for a call, so a re-run of `study curate proactive` after a crash costs nothing already done.
A file is written to a temporary name and renamed, so an interrupted run never leaves a
half-written judgement.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import openai

from study import model_client
from study.store.permissions import private_folder, write_private


class JudgeError(RuntimeError):
    """The judge endpoint failed; the message names it (never the key) and the fix."""


@dataclass
class OpenAIJudge:
    base_url: str | None
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 800
    timeout_seconds: float = 60.0
    cache_dir: Path | None = None
    calls: int = 0  # endpoint calls made (cache misses), for reports and tests

    def __post_init__(self) -> None:
        key = os.environ.get(self.api_key_env) or "no-key"
        # A judge runs in a batch, where a retry costs nothing a person waits for.
        self._client = model_client.client(self.base_url, key, self.timeout_seconds, max_retries=2)
        # What an error names: the address without a user:password a proxy may take in it.
        self._where = model_client.safe_url(self.base_url)

    def _key(self, version: str, messages: list[dict]) -> str:
        blob = json.dumps([self.model, version, messages, self.temperature], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def ask(self, version: str, messages: list[dict]) -> str:
        """The judge's raw answer to `messages` (a template of version `version`)."""
        key = self._key(version, messages)
        path = self.cache_dir / key[:2] / f"{key}.json" if self.cache_dir else None
        if path is not None and path.exists():
            return json.loads(path.read_text(encoding="utf-8"))["answer"]
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature,
                max_tokens=self.max_tokens, seed=0,
            )
        except openai.APITimeoutError:  # before its parent class: it is running, and slow
            raise JudgeError(
                f"the judge endpoint at {self._where} did not answer within {self.timeout_seconds:g} s "
                "(three tries). Fix: run again when the endpoint is less busy (judgements made so far "
                "are cached), or choose a faster judge with --judge-model"
            ) from None
        except openai.APIConnectionError:
            raise JudgeError(f"cannot reach the judge endpoint at {self._where}; is it running?") from None
        except openai.APIStatusError as exc:
            raise JudgeError(f"the judge endpoint at {self._where} answered HTTP {exc.status_code}") from None
        self.calls += 1
        try:
            choice = model_client.first_choice(response)
        except model_client.MalformedResponse as error:
            raise JudgeError(f"the judge endpoint at {self._where} sent a malformed response: {error}") from None
        answer = choice.message.content or ""
        if path is not None:
            # The cache holds the writers' texts as the judge read them: private, as an export is.
            private_folder(path.parent)
            record = {"model": self.model, "version": version, "messages": messages, "answer": answer}
            write_private(path, json.dumps(record).encode("utf-8"))
        return answer
