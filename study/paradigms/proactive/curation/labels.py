"""Expert-labelled HAR items, for validating a judge (MindCopilot §4.1, Table 1): JSON lines,
each {"context", "reference", "completion", "expert"} (expert: true to accept) and an optional
"id". The paper's 1.2K items were labelled by experts with a checklist-style protocol; this is
the file such a labelling produces (e.g. exported from a judging task)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

TEXTS = ("context", "reference", "completion")
EXAMPLE = '{"context": "...", "reference": "...", "completion": "...", "expert": true}'


class LabelFileError(ValueError):
    """A bad labels line; the message names the file, line and field."""


@dataclass(frozen=True)
class LabelledItem:
    id: str
    context: str
    reference: str
    completion: str
    expert: bool


def read_labels(path: Path) -> list[LabelledItem]:
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise LabelFileError(f"{path} line {number}: not JSON ({exc}). Fix: one object a line, e.g. {EXAMPLE}") from None
        if not isinstance(data, dict):
            raise LabelFileError(f"{path} line {number}: not a JSON object. Fix: e.g. {EXAMPLE}")
        for key in TEXTS:
            if not isinstance(data.get(key), str):
                raise LabelFileError(f"{path} line {number}: {key} must be text, got {data.get(key)!r}. Fix: e.g. {EXAMPLE}")
        if not isinstance(data.get("expert"), bool):
            raise LabelFileError(f"{path} line {number}: expert must be true (accept) or false (reject), got "
                                 f"{data.get('expert')!r}")  # fmt: skip
        items.append(LabelledItem(str(data.get("id", number)), *(data[k] for k in TEXTS), data["expert"]))
    if not items:
        raise LabelFileError(f"{path}: no labelled items")
    return items
