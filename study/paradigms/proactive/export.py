"""Export proactive sessions (MindCopilot L0-L3) in the extended CoAuthor format.

One `<session_id>.jsonl` per proactive session: the 17 release keys in the release's order,
then `proactive`, with every event including the extension events
(schemas/coauthor-proactive.schema.json), and `sessions.csv` naming each session's paradigm,
condition and prompt. `study export` (format coauthor) writes the strict CoAuthor files of the
same sessions instead: extension events and the `proactive` key dropped.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from study.config import Study
from study.export.coauthor import write_atomically, to_release_record
from study.store import make_engine, reading
from study.store import events as event_store
from study.store import sessions as session_store
from study.paradigms.proactive import is_proactive_study

SESSION_COLUMNS = ("session_id", "paradigm", "condition", "prompt_code", "genre", "events")


@dataclass(frozen=True)
class ProactiveExportSummary:
    sessions: int
    events: int


def to_extended_record(record: dict, event_num: int, paradigm: str) -> dict:
    out = to_release_record(record, event_num)
    # L0 sessions stored before their records carried the extension get its one required key.
    out["proactive"] = record.get("proactive") or {"paradigm": paradigm}
    return out


def export_proactive(study: Study, out: Path, *, include_unfinished: bool = False) -> ProactiveExportSummary:
    out.mkdir(parents=True, exist_ok=True)
    engine = make_engine(study.database_url)
    rows, total = [], 0
    with reading(engine) as connection:
        candidates = session_store.all_sessions(connection, finished_only=not include_unfinished)
    # L0 sessions belong to a MindCopilot study (the baseline of Table 5), not to a CoAuthor one.
    proactive_study = is_proactive_study(study.conditions)
    for session in candidates:
        condition = study.condition(session["condition"])
        if not proactive_study:  # L0 and control sessions of a CoAuthor-style study
            continue
        if condition.paradigm not in ("L0", "L1", "L2", "L3"):
            continue  # a control or chat arm beside them: not MindCopilot's, in `study export`

        with reading(engine) as connection:
            records = event_store.records(connection, session["session_id"])
        if not records:
            continue
        extended = [to_extended_record(r, i, condition.paradigm) for i, r in enumerate(records)]
        write_atomically(
            out / f"{session['session_id']}.jsonl",
            b"".join(json.dumps(r).encode() + b"\n" for r in extended),
        )
        total += len(extended)
        rows.append({
            "session_id": session["session_id"], "paradigm": condition.paradigm,
            "condition": condition.name, "prompt_code": session["prompt_code"],
            "genre": study.prompt(session["prompt_code"]).genre, "events": len(extended),
        })
    engine.dispose()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SESSION_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(out / "sessions.csv", buffer.getvalue().encode())
    return ProactiveExportSummary(sessions=len(rows), events=total)
