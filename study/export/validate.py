"""`study curate validate STUDY_FOLDER`: the stored sessions checked against the database.

A folder of exported files can say only whether each log is well formed. The study folder's
database also knows what the server issued, so here every stored session (finished or not)
is checked twice:
1. as `study export` writes it (the 2021 format, or the extended format a paradigm's studies
   are written in, e.g. MindCopilot's schemas/coauthor-proactive.schema.json), by
   study.curation.validate;
2. against the session's condition and what the server stored of it, by the rules the event
   API applies on arrival (each paradigm's `events` hook, study.paradigms.base; e.g.
   study.paradigms.proactive.arrival): sessions stored before those rules, or written into the
   database by other means, are caught here.
Line numbers are positions in the session's exported file. A study on a paradigm's own path (a
chat study) has no CoAuthor log; its own format's checks are its paradigm's.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from study import paradigms
from study.config import Study
from study.curation.issues import MAX_PER_CODE, SessionReport
from study.curation.validate import validate_lines
from study.export.as_run import paradigm_of
from study.export.coauthor import check_stored_names, to_release_record
from study.store import events as event_store
from study.store import create_tables, make_engine, reading
from study.store import sessions as session_store


def validate_study(study: Study, keep: int | None = MAX_PER_CODE) -> Iterator[SessionReport]:
    """One report per stored session with events, in the database's order."""
    if study.paradigm != "writing":
        return
    engine = make_engine(study.database_url)
    create_tables(engine)  # a database an earlier version made: the columns read below
    extended = next((m for m in paradigms.log_hooks() if hasattr(m, "extends") and m.extends(study)), None)
    rules = [m for m in (p.event_rules() for p in paradigms.registered()) if m and hasattr(m, "stored_problems")]
    extension_events = paradigms.extension_events()
    try:
        with reading(engine) as connection:
            sessions = session_store.all_sessions(connection, finished_only=False)
        # A condition renamed or removed in study.toml since: its sessions' paradigm is unknown,
        # and checked without it every ghost-text record read as forged ("proactive-forged").
        check_stored_names(study, sessions)
        for session in sessions:
            with reading(engine) as connection:
                records = event_store.records(connection, session["session_id"])
                if not records:
                    continue
                paradigm = _paradigm(study, session)
                if extended is not None:
                    exported = [(r, extended.to_record(r, i, paradigm)) for i, r in enumerate(records)]
                else:
                    kept = [r for r in records if r["eventName"] not in extension_events]
                    exported = [(r, to_release_record(r, i)) for i, r in enumerate(kept)]
                raw = [record for record, _ in exported]
                problems = [p for module in rules for p in module.stored_problems(connection, session, paradigm, raw)]
            yield _report(study, session, exported, problems, keep)
    finally:
        engine.dispose()


def _paradigm(study: Study, session: dict) -> str | None:
    # The paradigm the session ran with (study.export.as_run): its log holds that one's events.
    try:
        return paradigm_of(study, session)
    except KeyError:
        return None


def _report(study: Study, session: dict, exported: list[tuple], problems: list[tuple], keep) -> SessionReport:
    session_id = session["session_id"]
    name = f"{study.directory.name}: session {session_id} (database)"
    lines = ((number, orjson.dumps(out)) for number, (_, out) in enumerate(exported, start=1))
    report = validate_lines(lines, file=name, session_id=session_id, keep=keep)
    for index, code, field, message, fix in problems:
        report.add(code, None if index is None else index + 1, field, message, fix=fix)
    return report
