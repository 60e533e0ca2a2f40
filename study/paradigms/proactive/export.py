"""Export proactive sessions (MindCopilot L0-L3) in the extended CoAuthor format.

One `<session_id>.jsonl` per proactive session: the 17 release keys in the release's order,
then `proactive`, with every event including the extension events
(schemas/coauthor-proactive.schema.json), `sessions.csv` naming the paradigm each session ran with,
condition, prompt, the model its calls were sent with (study.export.settings_as_run), the
model(s) the endpoint said answered and whether `study simulate` wrote it, and
`suggestion_requests.json` (schemas/proactive-requests.schema.json): per L1-L3 suggestion, the
context the model saw (study.paradigms.proactive.curation.requests), and these sessions' survey
answers as the CoAuthor format gives them, `survey.csv` and `surveys.json` (study.export.surveys:
MindCopilot asks Q1-Q10 after every session). `study export` (format
coauthor) writes the strict CoAuthor files of the
same sessions instead: extension events and the `proactive` key dropped.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from study.config import Study
from study.export import as_run, settings_as_run
from study.export.coauthor import check_stored_names, to_release_record, write_atomically
from study.export.surveys import export_surveys
from study.store import create_tables, make_engine, provenance, reading
from study.store import events as event_store
from study.store import sessions as session_store
from study.store import simulated as simulated_store
from study.store.db import suggestion_requests
from study.store.permissions import private_folder
from study.paradigms.proactive import PROACTIVE, is_proactive_study
from study.paradigms.proactive.curation.requests import FILE_NAME, request_entry, requests_document

# model: as the session's calls were sent with it, empty when it made none (as models.csv's);
# answered_model: as the endpoint named it (study.store.provenance); simulated: true for a
# session `study simulate` wrote, as metadata.csv's, so a pilot's sessions are never taken for
# people's in this folder or in `study report` of it. finished: false for a session whose writer
# had not finished writing, which only `--all` exports (as the chat export's `finished`): `study
# report` of the folder measures the finished ones, as it does on the study folder.
SESSION_COLUMNS = (
    "session_id", "paradigm", "condition", "prompt_code", "genre", "events", "model", "answered_model",
    "simulated", "finished",
)


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
    engine = make_engine(study.database_url)
    create_tables(engine)  # a database an earlier version made: the columns read below
    rows, total, requests = [], 0, []
    with reading(engine) as connection:
        candidates = session_store.all_sessions(connection, finished_only=not include_unfinished)
        answered = provenance.answered_models(connection)
        calls = provenance.calls_of(connection)  # what each session's model calls were sent with
        simulated = simulated_store.simulated_ids(connection)
    # Before anything is written, as the CoAuthor export: a condition or prompt renamed or
    # removed in study.toml after sessions were stored under it stopped this one halfway.
    try:
        check_stored_names(study, candidates)
        # ... and an arm's paradigm changed under its name, where a session did not store its own.
        as_run.check_known(study, candidates)
    finally:
        engine.dispose()
    private_folder(out)  # worker ids and keystrokes: study.store.permissions
    # L0 sessions belong to a MindCopilot study (the baseline of Table 5), not to a CoAuthor one.
    # Each session is of the paradigm it ran with, which study.toml may have changed under the
    # arm's name since (study.export.as_run): L1 sessions stay L1 when the arm is L2 now.
    proactive_study = is_proactive_study(as_run.conditions_as_run(study, candidates), study.proactive)
    for session in candidates:
        condition = as_run.condition_as_run(study, session)
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
        if condition.paradigm in PROACTIVE:
            requests.extend(_requests(engine, session["session_id"]))
        rows.append({
            "session_id": session["session_id"], "paradigm": condition.paradigm,
            "condition": condition.name, "prompt_code": session["prompt_code"],
            "genre": study.prompt(session["prompt_code"]).genre, "events": len(extended),
            # Not study.toml's of today, which may have been swapped in after a session that never asked.
            "model": provenance.cell(settings_as_run.models_sent([c for c, _ in calls.get(session["session_id"], [])])),
            "answered_model": provenance.cell(answered.get(session["session_id"])),
            "simulated": "true" if session["session_id"] in simulated else "false",
            "finished": "true" if session["writing_finished_at"] is not None else "false",
        })
    with reading(engine) as connection:  # the exported sessions' answers, as the CoAuthor export's
        surveys = export_surveys(study, connection, [row["session_id"] for row in rows])
    engine.dispose()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SESSION_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(out / "sessions.csv", buffer.getvalue().encode())
    write_atomically(out / FILE_NAME, requests_document(requests))
    for name, data in surveys.items():
        write_atomically(out / name, data)
    return ProactiveExportSummary(sessions=len(rows), events=total)


def export(study: Study, out: Path, *, include_unfinished: bool = False) -> str:
    """`study export --format proactive` (study.paradigms.base.Paradigm.exports): the line it prints."""
    done = export_proactive(study, out, include_unfinished=include_unfinished)
    return f"Exported {done.sessions} proactive sessions ({done.events} events) to {out}"


def _requests(engine, session_id: str) -> list[dict]:
    with reading(engine) as connection:
        rows = connection.execute(
            suggestion_requests.select()
            .where(suggestion_requests.c.session_id == session_id)
            .order_by(suggestion_requests.c.id)
        ).mappings().all()
    return [request_entry(dict(row)) for row in rows]
