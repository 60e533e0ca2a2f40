"""Expert-labelled HAR items, for validating a judge (MindCopilot §4.1, Table 1): JSON lines in
the shape of schemas/har-labels.schema.json, each a context, the reference continuation, the
judged completion and the experts' verdict (true: accept). The paper's 1.2K items were labelled
with a checklist-style protocol; this is the file such a labelling produces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from study.paradigms.proactive.curation.json_lines import read_json_lines


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
    rows = read_json_lines(path, "har-labels.schema.json", LabelFileError)
    if not rows:
        raise LabelFileError(f"{path}: no labelled items")
    return [LabelledItem(str(data.get("id", number)), data["context"], data["reference"], data["completion"],
                         data["expert"]) for number, data in rows]  # fmt: skip
