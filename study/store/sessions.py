"""Writing sessions: who writes, on which prompt, in which condition, and how far they are."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections import Counter

from sqlalchemy import Connection, Engine, func, select, update

from study.store.db import sessions, suggestion_requests
from study.store.driver import driver_read
from study.store.withdrawals import not_withdrawn

# The participant's path, in order (see study.server.participant). "presurvey" holds the
# surveys placed before writing (study.survey); with none configured it passes straight on. A
# paradigm may have a path of its own (the chat study's: study.paradigms.path).
STAGES = (
    "consent", "instructions", "presurvey", "prompt", "writing", "evaluation", "survey", "complete"
)

# Verification codes avoid look-alike characters (0/O, 1/I/L) because workers type them.
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def new_session_id() -> str:
    # 32 hex characters, the shape of CoAuthor's session ids.
    return uuid.uuid4().hex


def new_verification_code() -> str:
    """12 characters from a 31-letter alphabet: about 59 bits, unguessable, unrelated to the id."""
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(12))


def create(
    connection: Connection,
    *,
    worker_id: str | None = None,
    assignment_id: str | None = None,
    hit_id: str | None = None,
    turk_submit_to: str | None = None,
    access_code: str | None = None,
) -> dict:
    row = {
        "session_id": new_session_id(),
        "worker_id": worker_id,
        "assignment_id": assignment_id,
        "hit_id": hit_id,
        "turk_submit_to": turk_submit_to,
        "access_code": access_code,
        "stage": STAGES[0],
        "created_at": time.time(),
    }
    connection.execute(sessions.insert().values(**row))
    return get(connection, row["session_id"])


def get(connection: Connection, session_id: str) -> dict | None:
    row = connection.execute(
        select(sessions).where(sessions.c.session_id == session_id)
    ).mappings().first()
    return dict(row) if row else None


def brief(engine: Engine, session_id: str) -> dict | None:
    """A session's id, stage and condition, read on the driver (store.driver.driver_read): what the
    event API needs for every batch, at a fraction of `get`'s CPU."""
    rows = driver_read(
        engine, "SELECT stage, condition FROM sessions WHERE session_id = ?", (session_id,)
    )
    if not rows:
        return None
    return {"session_id": session_id, "stage": rows[0][0], "condition": rows[0][1]}


# Whether a session is at a stage in a condition (1 or 0): a request served from a worker's
# memory of the session (study.server.session_memory) confirms it in a transaction it writes in.
AT_STAGE = "SELECT count(*) FROM sessions WHERE session_id = ? AND stage = ? AND condition = ?"


def at_stage(session_id: str, stage: str, condition: str) -> tuple[str, tuple]:
    """The statement counting 1 while `session_id` is at `stage` in `condition`, else 0, for a
    staged work's stage (study.store.group_commit)."""
    return AT_STAGE, (session_id, stage, condition)


def by_assignment(connection: Connection, assignment_id: str) -> dict | None:
    row = connection.execute(
        select(sessions).where(sessions.c.assignment_id == assignment_id)
    ).mappings().first()
    return dict(row) if row else None


def latest_for_access_code(connection: Connection, access_code: str) -> dict | None:
    row = connection.execute(
        select(sessions)
        .where(sessions.c.access_code == access_code)
        .order_by(sessions.c.created_at.desc())
        .limit(1)
    ).mappings().first()
    return dict(row) if row else None


def update_session(connection: Connection, session_id: str, **values) -> None:
    for key in ("self_evaluation", "survey"):
        if key in values and not isinstance(values[key], str):
            values[key] = json.dumps(values[key], ensure_ascii=False)
    connection.execute(update(sessions).where(sessions.c.session_id == session_id).values(**values))


def prompt_counts(connection: Connection, session: dict) -> Counter:
    """How often this session's writer has taken each prompt (this session excluded)."""
    if session["worker_id"]:
        writer = sessions.c.worker_id == session["worker_id"]
    elif session["access_code"]:
        writer = sessions.c.access_code == session["access_code"]
    else:
        return Counter()
    rows = connection.execute(
        select(sessions.c.prompt_code, func.count())
        .where(writer, sessions.c.prompt_code.is_not(None))
        .where(sessions.c.session_id != session["session_id"])
        .group_by(sessions.c.prompt_code)
    )
    return Counter(dict(rows.all()))


def sessions_per_prompt(connection: Connection) -> Counter:
    """Sessions per prompt, over every writer."""
    query = select(sessions.c.prompt_code, func.count()).where(sessions.c.prompt_code.is_not(None))
    return Counter(dict(connection.execute(query.group_by(sessions.c.prompt_code)).all()))


def condition_counts(connection: Connection, prompt_code: str | None = None) -> Counter:
    """Sessions per condition, over all sessions or those on one prompt."""
    query = select(sessions.c.condition, func.count()).where(sessions.c.condition.is_not(None))
    if prompt_code is not None:
        query = query.where(sessions.c.prompt_code == prompt_code)
    return Counter(dict(connection.execute(query.group_by(sessions.c.condition)).all()))


def names_in_progress(connection: Connection) -> dict[str, Counter]:
    """How many sessions not yet complete were given each condition and each prompt code, and
    each (condition, paradigm) they were given together (sessions begun before the paradigm
    was stored left out)."""
    rows = connection.execute(
        select(sessions.c.condition, sessions.c.prompt_code, sessions.c.paradigm).where(sessions.c.stage != "complete")
    ).all()
    return {
        "condition": Counter(condition for condition, _, _ in rows if condition),
        "prompt_code": Counter(code for _, code, _ in rows if code),
        "paradigm": Counter((condition, paradigm) for condition, _, paradigm in rows if condition and paradigm),
    }


def ids_in_progress(connection: Connection) -> set[str]:
    """The sessions not yet complete."""
    return set(connection.execute(select(sessions.c.session_id).where(sessions.c.stage != "complete")).scalars())


def stored_ids(connection: Connection, session_ids: set[str]) -> set[str]:
    """Those of `session_ids` this database holds."""
    return set(connection.execute(
        select(sessions.c.session_id).where(sessions.c.session_id.in_(sorted(session_ids)))
    ).scalars())  # fmt: skip


def all_sessions(connection: Connection, *, finished_only: bool = False, include_withdrawn: bool = False) -> list[dict]:
    """The study's sessions, oldest first, those of writers who withdrew (`study withdraw
    --study`, study.store.withdrawals) left out: the readers of the study folder (export,
    report, judging items) go through here. `include_withdrawn`: for a reader that
    must see them to honour the withdrawal itself (a release build counts what it leaves out;
    an export removes an earlier export's files of theirs)."""
    query = select(sessions).order_by(sessions.c.created_at)
    if not include_withdrawn:
        query = query.where(not_withdrawn())
    if finished_only:
        query = query.where(sessions.c.writing_finished_at.is_not(None))
    return [dict(row) for row in connection.execute(query).mappings()]


def ai_requests(connection: Connection, session_id: str) -> int:
    """How often the task server asked the model for this session: what "asked the AI" means
    for review and qualification rules (a browser's `suggestion-get` events can be forged)."""
    return connection.execute(
        select(func.count())
        .select_from(suggestion_requests)
        .where(suggestion_requests.c.session_id == session_id)
    ).scalar_one()
