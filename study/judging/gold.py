"""Gold items: texts with a known score that catch judges who rate without reading.

The gold file ([judging] gold) holds one JSON object per line, {"text": "...", "score": 1};
its errors name the line and the fix. A judge's gold check: the share of their gold ratings
within `tolerance` of the known score. Below `min_correct` the judge is flagged, and with
[judging] exclude_failed_gold (the default) their ratings are left out of every result. A judge
who has rated no gold item yet is not flagged: there is nothing to hold against them. Pure but
for reading the file.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class GoldError(ValueError):
    pass


@dataclass(frozen=True)
class GoldItem:
    text: str
    score: int


@dataclass(frozen=True)
class JudgeCheck:
    judge: str
    gold_rated: int
    gold_correct: int
    flagged: bool

    @property
    def share(self) -> float | None:
        return self.gold_correct / self.gold_rated if self.gold_rated else None


def read(path: Path, scores: Iterable[int]) -> list[GoldItem]:
    allowed = sorted(scores)
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise GoldError(f"{where}: not JSON ({error.msg}). Fix: one {{\"text\": ..., \"score\": ...}} object per line.") from None
        if not isinstance(value, dict) or not isinstance(value.get("text"), str) or not value["text"].strip():
            raise GoldError(f"{where}: text must be a non-empty string. Fix: {{\"text\": \"...\", \"score\": {allowed[0]}}}.")
        score = value.get("score")
        if not isinstance(score, int) or isinstance(score, bool) or score not in allowed:
            raise GoldError(f"{where}: score must be one of the rubric's scores {allowed}, got {score!r}.")
        found.append(GoldItem(value["text"].strip(), score))
    return found


def check_judges(
    gold_ratings: Iterable[tuple[str, int, int]], *, tolerance: int, min_correct: float
) -> dict[str, JudgeCheck]:
    """`gold_ratings`: (judge, score given, known score) for every gold rating."""
    rated: dict[str, int] = defaultdict(int)
    correct: dict[str, int] = defaultdict(int)
    for judge, given, known in gold_ratings:
        rated[judge] += 1
        correct[judge] += abs(given - known) <= tolerance
    return {
        judge: JudgeCheck(judge, rated[judge], correct[judge], correct[judge] / rated[judge] < min_correct)
        for judge in rated
    }
