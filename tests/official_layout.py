"""The shipped CoAuthor sample laid out as the public release is distributed: one metadata
sheet per genre (`creative.csv`, `argumentative.csv`, the release's 13 columns, no `genre`
column), built from the shipped metadata.csv, with the session logs beside them."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

OFFICIAL_COLUMNS = ("timestamp", "worker_id", "session_id", "prompt_code", "temperature",
                    "frequency_penalty", "num_query", "num_selected", "perc_selected",
                    "num_cursor", "time", "num_event", "written_by_human")  # fmt: skip


def lay_out_officially(source: Path, dest: Path, *, split: bool = False) -> Path:
    """`dest/creative.csv`, `dest/argumentative.csv` and the logs in `dest/sessions/` (or in
    `dest/sessions/creative/` and `dest/sessions/argumentative/` when `split`)."""
    with open(source / "metadata.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    dest.mkdir(parents=True, exist_ok=True)
    for genre in ("creative", "argumentative"):
        mine = [r for r in rows if r["genre"] == genre]
        with open(dest / f"{genre}.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=OFFICIAL_COLUMNS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(mine)
        folder = dest / "sessions" / genre if split else dest / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        for row in mine:
            name = f"{row['session_id']}.jsonl"
            shutil.copyfile(source / "sessions" / name, folder / name)
    return dest
