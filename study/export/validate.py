"""`study curate validate STUDY_FOLDER`: the stored sessions checked against the database.

A folder of exported files can say only whether each log is well formed. The study folder's
database also knows what the server issued, so here every stored session (finished or not)
is checked twice:
1. as `study export` writes it (the extended format of schemas/coauthor-proactive.schema.json
   in a MindCopilot study, the 2021 format otherwise), by study.curation.validate;
2. against the session's condition and its `suggestion_requests` rows, by the rules the event
   API applies on arrival (study.paradigms.proactive.curation.provenance): sessions stored before those
   rules, or written into the database by other means, are caught here ("proactive-forged").
Line numbers are positions in the session's exported file. Chat studies have no CoAuthor log
(`study export --format chat`).
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson
from sqlalchemy import select

from study.config import Study
from study.curation.issues import MAX_PER_CODE, SessionReport
from study.paradigms.proactive.curation import EXTENSION_EVENTS
from study.paradigms.proactive.curation.provenance import Provenance, issued_texts
from study.curation.validate import validate_lines
from study.export.coauthor import to_release_record
from study.paradigms.proactive.export import to_extended_record
from study.store import make_engine, reading
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.db import suggestion_requests
from study.paradigms.proactive import is_proactive_study


def validate_study(study: Study, keep: int | None = MAX_PER_CODE) -> Iterator[SessionReport]:
    """One report per stored session with events, in the database's order."""
    if study.paradigm == "chat":
        return
    engine = make_engine(study.database_url)
    extended = is_proactive_study(study.conditions, study.proactive)
    try:
        with reading(engine) as connection:
            sessions = session_store.all_sessions(connection, finished_only=False)
        for session in sessions:
            session_id = session["session_id"]
            with reading(engine) as connection:
                records = event_store.records(connection, session_id)
                rows = connection.execute(
                    select(suggestion_requests.c.id, suggestion_requests.c.suggestions, suggestion_requests.c.error)
                    .where(suggestion_requests.c.session_id == session_id)
                ).all()
            if records:
                yield _report(study, session, records, issued_texts(rows), extended, keep)
    finally:
        engine.dispose()


def _report(study: Study, session: dict, records: list[dict], issued: dict, extended: bool, keep) -> SessionReport:
    session_id = session["session_id"]
    name = f"{study.directory.name}: session {session_id} (database)"
    try:
        paradigm = study.condition(session["condition"]).paradigm
    except KeyError:
        paradigm = None
    if extended:
        exported = [(r, to_extended_record(r, i, paradigm or "L0")) for i, r in enumerate(records)]
    else:
        kept = [r for r in records if r["eventName"] not in EXTENSION_EVENTS]
        exported = [(r, to_release_record(r, i)) for i, r in enumerate(kept)]
    lines = ((number, orjson.dumps(out)) for number, (_, out) in enumerate(exported, start=1))
    report = validate_lines(lines, file=name, session_id=session_id, keep=keep)
    if paradigm is None:
        report.add("proactive-forged", None, "condition",
                   f"{session['condition']!r} is not a condition of study.toml, so its events "
                   "cannot be checked against it", fix="put the condition back in study.toml")  # fmt: skip
        return report
    provenance = Provenance(paradigm, issued)
    for number, (record, _) in enumerate(exported, start=1):
        for problem in provenance.check(record):
            report.add("proactive-forged", number, problem.field, problem.message)
    return report
