"""Knowledge-aware Editing Distance: the cognitive cost of editing a suggestion into its final text.

MindCopilot §4.2: KED "measures the distance between a model-generated suggestion and the
final user-edited text, while weighting edit operations according to their cognitive demands:
semantic rewrites and factual corrections incur higher costs than local or surface-level
edits"; Table 8: it "decomposes edits by entity complexity, relation, and semantic role". The
paper's Edit_Distance prompt is not available, so this is the spec's proposal R2 (A3.2): the
judge lists the edit operations with their categories, and code weighs and adds them:

    KED(s -> y) = sum over edits e of sum over categories c of e of w(c),   KED = 0 iff s == y

(one edit may carry several categories; their costs add, Cases 9 and 10). The weights are the
spec's defaults, not the paper's, and are meant to be calibrated (`ked_calibrate`). The judge's
own total is kept too (reading R1). KED is undefined when nothing was accepted: the mean of no
values is NaN, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from study.metrics.judges.boxed import JudgeParseError, parse_json_answer

VERSION = "ked-v1"

# Spec A3.2, "Toolkit default weights" [I]: cost per edit and category.
WEIGHTS = {
    "surface": 1.0,
    "lexical": 1.0,
    "proposition_deletion": 1.0,
    "simple_entity": 2.0,
    "proposition_addition": 2.0,
    "claim_strength": 3.0,
    "constraint": 3.0,
    "complex_entity": 4.0,
    "relation": 4.0,
}
CATEGORIES = tuple(WEIGHTS)
_DESCRIPTIONS = {
    "surface": "typo, punctuation, spacing, capitalization, function word, formatting",
    "lexical": "word choice or style, meaning kept",
    "proposition_deletion": "content removed",
    "simple_entity": "an everyday noun or name changed",
    "proposition_addition": "a new clause or content added",
    "claim_strength": "hedge, certainty, modality or claim strength changed",
    "constraint": "a condition or constraint added or removed",
    "complex_entity": "a knowledge-dense entity changed: quantity with unit, statistic, date, method, dataset, model, term",
    "relation": "the backbone relation changed: connective, causal direction",
}


@dataclass(frozen=True)
class Edit:
    op: str  # insert, delete, substitute, reorder
    before: str
    after: str
    categories: tuple[str, ...]


@dataclass(frozen=True)
class KedResult:
    value: float | None  # None: unreadable judge answer
    edits: tuple[Edit, ...] = ()
    judge_total: float | None = None
    raw: str = ""
    version: str = VERSION
    counts: dict = field(default_factory=dict)  # category -> number of edits carrying it


def normalize(text: str) -> str:
    return " ".join(text.split())


def messages(suggestion: str, final: str, context: str = "") -> list[dict]:
    lines = [
        "TASK: KED",
        "List the edit operations that turn the SUGGESTION into the FINAL text. For each edit give "
        "op (insert, delete, substitute, reorder), before, after, and every category that applies:",
    ]
    lines += [f"- {name}: {text}" for name, text in _DESCRIPTIONS.items()]
    lines += [
        f'<CONTEXT>: "{context[-1500:]}"',
        f'<SUGGESTION>: "{suggestion}"',
        f'<FINAL>: "{final}"',
        'Answer only with \\boxed{{"edits": [{{"op": "...", "before": "...", "after": "...", '
        '"categories": ["..."]}}], "total": <your own estimate of the editing cost>}}',
    ]
    return [{"role": "user", "content": "\n".join(lines)}]


def ked_from_edits(edits: Iterable[Edit], weights: Mapping[str, float] = WEIGHTS) -> float:
    return float(sum(weights[c] for edit in edits for c in edit.categories))


def read_edits(answer: str) -> tuple[tuple[Edit, ...], float | None]:
    data = parse_json_answer(answer)
    items = data.get("edits")
    if not isinstance(items, list):
        raise JudgeParseError("'edits' is not a list")
    edits = []
    for item in items:
        if not isinstance(item, Mapping):
            raise JudgeParseError("an edit is not an object")
        categories = tuple(c for c in item.get("categories", ()) if c in WEIGHTS)
        edits.append(Edit(str(item.get("op", "")), str(item.get("before", "")),
                          str(item.get("after", "")), categories))
    total = data.get("total")
    return tuple(edits), float(total) if isinstance(total, (int, float)) else None


def ked(suggestion: str, final: str, judge, context: str = "",
        weights: Mapping[str, float] = WEIGHTS, retries: int = 3) -> KedResult:
    """KED of editing `suggestion` into `final`; `judge.ask(version, messages) -> str`."""
    if normalize(suggestion) == normalize(final):
        return KedResult(0.0)
    asked = messages(suggestion, final, context)
    answer = ""
    for attempt in range(retries):
        answer = judge.ask(VERSION if attempt == 0 else f"{VERSION}#retry{attempt}", asked)
        try:
            edits, total = read_edits(answer)
        except JudgeParseError:
            continue
        counts: dict[str, int] = {}
        for edit in edits:
            for c in edit.categories:
                counts[c] = counts.get(c, 0) + 1
        return KedResult(ked_from_edits(edits, weights), edits, total, answer, counts=counts)
    return KedResult(None, raw=answer)


def ked_mean(values: Iterable[float | None]) -> float:
    """The mean over accepted suggestions (Tables 4, 11); NaN when there are none."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan

