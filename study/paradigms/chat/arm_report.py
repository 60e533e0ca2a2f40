"""A chat arm in `study report`: what its writers pasted from the assistant's replies is the
assistant's text, not text from outside (study.curation.origin's `assistant_texts`).

The report's statistics are computed from the CoAuthor logs alone, where a reply pasted from
the panel is a long `user` insert the session never held, i.e. outside text. This loader
(study.report.data.EXTRA_LOADERS) reads each chat-arm session's conversation (the study
database, or `chat-arm-conversations.jsonl` beside an export) and recomputes the session's
origin columns with it, so the origin section and the arms' comparison read it right.
"""

from __future__ import annotations

import json
from pathlib import Path

from study import config as study_config
from study.curation.formats import SessionFileError, read_session
from study.curation.metadata_files import session_logs
from study.curation.origin import origin
from study.curation.replay import DeltaError
from study.export import as_run
from study.paradigms.chat import arm, arm_export


def _from_study(path: Path) -> tuple[dict[str, list[str]], dict[str, list[dict]]]:
    from study.paradigms.chat import store as chat_store
    from study.store import events as event_store
    from study.store import create_tables, make_engine, reading
    from study.store import sessions as session_store

    study = study_config.load(path)
    replies, events = {}, {}
    engine = make_engine(study.database_url)
    create_tables(engine)  # a database an earlier version made: the columns read below
    with reading(engine) as connection:
        for session in session_store.all_sessions(connection, finished_only=True):
            # A chat arm as the session ran it: study.toml may name another paradigm for the arm
            # now (study.export.as_run).
            if session["condition"] and arm.is_chat_arm(as_run.condition_as_run(study, session)):
                sid = session["session_id"]
                replies[sid] = [m["content"] for m in chat_store.messages(connection, sid) if m["role"] == "assistant"]
                events[sid] = event_store.records(connection, sid)
    engine.dispose()
    return replies, events


def _from_folder(path: Path) -> tuple[dict[str, list[str]], dict[str, list[dict]]]:
    file = path / arm_export.FILE
    if not file.is_file():
        return {}, {}
    replies = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            replies[row["session_id"]] = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
    events = {}
    for log in session_logs(path):
        if log.stem in replies:
            try:
                events[log.stem] = read_session(log).events
            except SessionFileError:
                continue
    return replies, events


def load(data) -> None:
    is_study = (data.path / study_config.CONFIG_NAME).is_file()
    replies, events = _from_study(data.path) if is_study else _from_folder(data.path)
    for facts in data.sessions:
        if facts.session_id in replies and facts.session_id in events:
            try:
                found = origin(events[facts.session_id], assistant_texts=replies[facts.session_id])
            except (DeltaError, ValueError):
                continue
            facts.stats.update(found.row())
