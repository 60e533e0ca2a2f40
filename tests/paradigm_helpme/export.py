"""`study export --format helpme`: the study's sessions as CoAuthor logs (the core's export),
and help.csv: per session, how often the writer asked for help and used it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from study.export.coauthor import export_study


def help_counts(records: list[dict]) -> dict[str, int]:
    names = [r["eventName"] for r in records]
    return {"asked": names.count("suggestion-get"), "used": names.count("suggestion-select")}


def export(study, out: Path, *, include_unfinished: bool = False) -> str:
    summary = export_study(study, out, include_unfinished=include_unfinished)
    rows = []
    for path in sorted(out.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        rows.append({"session_id": path.stem, **help_counts(records)})
    with open(out / "help.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["session_id", "asked", "used"])
        writer.writeheader()
        writer.writerows(rows)
    return f"Exported {summary.sessions} helpme sessions ({summary.events} events) to {out}, with help.csv"
