"""The chat study's state: assignment, intent, pre-writing answers, the conversation and the
document pane (study.paradigms.chat).

Messages are numbered 0, 1, 2, ... per session. A user message carries the browser's
`client_id`, so a resend after a lost answer (a dropped connection, a killed server) finds the
stored message instead of adding a second one; its reply is generated only if none is stored.
"""

from __future__ import annotations

import json
import time

from sqlalchemy import Connection, func, select, update

from study.curation.replay import DeltaError, apply_delta, from_units
from study.store import events as event_store
from study.store import group_commit
from study.store.chat_tables import chat_events, chat_messages, chat_sessions
from study.store.db import storable_text, suggestion_requests
from study.store.driver import driver_fetch


def get(connection: Connection, session_id: str) -> dict | None:
    row = connection.execute(
        select(chat_sessions).where(chat_sessions.c.session_id == session_id)
    ).mappings().first()
    if row is None:
        return None
    out = dict(row)
    out["offered"] = json.loads(out["offered"] or "[]")
    out["prewriting"] = json.loads(out["prewriting"]) if out["prewriting"] else None
    return out


def create(connection: Connection, session_id: str, document_type: str, offered: list[str]) -> dict:
    connection.execute(chat_sessions.insert().values(
        session_id=session_id, document_type=document_type, offered=json.dumps(offered),
        document="", assigned_at=time.time(),
    ))  # fmt: skip
    return get(connection, session_id)


def update_chat(connection: Connection, session_id: str, **values) -> None:
    if "prewriting" in values and not isinstance(values["prewriting"], str):
        values["prewriting"] = json.dumps(values["prewriting"], ensure_ascii=False)
    connection.execute(
        update(chat_sessions).where(chat_sessions.c.session_id == session_id).values(**values)
    )


def type_counts(connection: Connection, condition: str | None = None) -> dict[str, int]:
    """Chat sessions per document type, overall or within one condition (assistant)."""
    from study.store.db import sessions

    query = select(chat_sessions.c.document_type, func.count()).join(
        sessions, sessions.c.session_id == chat_sessions.c.session_id
    )
    if condition is not None:
        query = query.where(sessions.c.condition == condition)
    return dict(connection.execute(query.group_by(chat_sessions.c.document_type)).all())


# -- messages ---------------------------------------------------------------------------------


def messages(connection: Connection, session_id: str) -> list[dict]:
    rows = connection.execute(
        select(chat_messages).where(chat_messages.c.session_id == session_id).order_by(chat_messages.c.seq)
    ).mappings()
    return [dict(row) for row in rows]


def by_client_id(connection: Connection, session_id: str, client_id: str) -> dict | None:
    row = connection.execute(
        select(chat_messages).where(
            chat_messages.c.session_id == session_id, chat_messages.c.client_id == client_id
        )
    ).mappings().first()
    return dict(row) if row else None


def add_message(connection: Connection, session_id: str, role: str, content: str, **values) -> dict:
    """Store a message at the session's next seq (`insert_message`, with `values` its
    client_id, model, latency_ms)."""
    next_seq = connection.execute(
        select(func.coalesce(func.max(chat_messages.c.seq) + 1, 0)).where(
            chat_messages.c.session_id == session_id
        )
    ).scalar_one()
    return insert_message(connection, session_id, next_seq, role, content, **values)


# A chat arm's message path reads and writes on the driver (study.store.driver.driver_fetch):
# SQLAlchemy's statement machinery costs several times these statements' own work, and every
# message of every writer in a chat arm pays it (issue 17).
_CONVERSATION = "SELECT seq, role, content, client_id FROM chat_messages WHERE session_id = ? ORDER BY seq"
_AT = "SELECT seq, role, content, client_id FROM chat_messages WHERE session_id = ? AND seq = ?"
_INSERT = """
    INSERT INTO chat_messages (session_id, seq, role, content, created_at, client_id, model, latency_ms)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
# A reply for a seq already taken (another tab asked for the same message) stores nothing.
_KEEP_THE_FIRST = " ON CONFLICT (session_id, seq) DO NOTHING"
_FIELDS = ("seq", "role", "content", "client_id")


def conversation(connection: Connection, session_id: str) -> list[dict]:
    """`messages` with only seq, role, content and client_id, read in one statement on the driver."""
    return conversation_of(driver_fetch(connection, *reading_conversation(session_id)))


def reading_conversation(session_id: str) -> tuple[str, tuple]:
    """The statement `conversation` runs (for a staged work's stage, study.store.group_commit);
    `conversation_of` its rows."""
    return _CONVERSATION, (session_id,)


def conversation_of(rows: list[tuple]) -> list[dict]:
    return [dict(zip(_FIELDS, row)) for row in rows]


def insert_message(
    connection: Connection, session_id: str, seq: int, role: str, content: str,
    client_id: str | None = None, model: str | None = None, latency_ms: float | None = None,
) -> dict:
    """Store a message at `seq`, which the caller read as the next one in this transaction."""
    statement, message = inserting_message(session_id, seq, role, content, client_id, model, latency_ms)
    driver_fetch(connection, *statement)
    return message


def inserting_message(
    session_id: str, seq: int, role: str, content: str,
    client_id: str | None = None, model: str | None = None, latency_ms: float | None = None,
) -> tuple[tuple[str, tuple], dict]:
    """`insert_message`'s statement, for a staged work's stage, and the message it stores."""
    content = storable_text(content)  # a paste can carry a NUL, a model can write one
    values = (session_id, seq, role, content, time.time(), client_id, model, latency_ms)
    return (_INSERT, values), {"seq": seq, "role": role, "content": content, "client_id": client_id}


def storing_reply(session_id: str, seq: int, text: str, model: str, latency_ms: float, settled: tuple[str, tuple]):
    """A staged work (study.store.group_commit.run_staged) storing a model's reply at `seq`
    together with `settled`, the statement settling its model call (model_calls.settling):
    the reply stored there, or the one already there when two tabs asked at once (the first
    stored stays: the insert does nothing on a taken seq, and the look after it reads what is
    there). On PostgreSQL one round trip, with the COMMIT: the participant waits on it."""

    def work(_connection):
        (insert, values), _ = inserting_message(session_id, seq, "assistant", text, model=model, latency_ms=latency_ms)
        _, _, stored = yield group_commit.Last([
            settled, (insert + _KEEP_THE_FIRST, values), (_AT, (session_id, seq)),
        ])  # fmt: skip
        return conversation_of(stored)[0]

    return work


def reply_windows(connection: Connection, session_id: str) -> dict[int, dict]:
    """What the model read for each stored reply, by the reply's seq: the `window` its model
    call recorded (study.paradigms.chat.assistant.Window). Replies made before windows were
    recorded are absent."""
    rows = connection.execute(
        select(suggestion_requests.c.parameters).where(
            suggestion_requests.c.session_id == session_id, suggestion_requests.c.error.is_(None)
        )
    ).scalars()
    windows = {}
    for text in rows:
        parameters = json.loads(text or "{}")
        if parameters.get("mode") == "chat_reply" and "window" in parameters and "reply_to" in parameters:
            windows[parameters["reply_to"] + 1] = parameters["window"]
    return windows


def exchanges(history: list[dict]) -> int:
    """Completed exchanges: a user message answered by the assistant (CollabLLM App. E)."""
    return sum(1 for m in history if m["role"] == "assistant")


# -- the document pane ------------------------------------------------------------------------


def document_from_events(connection: Connection, session_id: str) -> tuple[str, int]:
    """The document pane as its stored text events leave it, and the next unstored seq. Only
    the unbroken run from seq 0 is replayed: a later event cannot apply before a missing one."""
    text, expected = "", 0
    for record, seq in zip(
        event_store.records(connection, session_id, chat_events),
        event_store.stored_seqs(connection, session_id, chat_events),
    ):
        if seq != expected:
            break
        delta = record.get("textDelta")
        if isinstance(delta, dict):
            try:
                text = apply_delta(text, delta.get("ops", []))
            except DeltaError:
                break
        expected += 1
    return from_units(text), expected


def totals(connection: Connection) -> dict[str, int]:
    """For `study status`: chat sessions, exchanges (assistant replies) and page events."""
    return {
        "sessions": connection.execute(select(func.count()).select_from(chat_sessions)).scalar_one(),
        "exchanges": connection.execute(
            select(func.count()).select_from(chat_messages).where(chat_messages.c.role == "assistant")
        ).scalar_one(),
        "events": connection.execute(select(func.count()).select_from(chat_events)).scalar_one(),
    }
