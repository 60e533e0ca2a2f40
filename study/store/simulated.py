"""Sessions written by simulated writers (`study simulate`): which ones, and who played them."""

from __future__ import annotations

import time

from sqlalchemy import Column, Connection, Float, Integer, String, Table, Text, func, select

from study.store.db import metadata


simulated_sessions = Table(
    "simulated_sessions",
    metadata,
    # A session written by `study simulate`, not by a person: every export, report and release
    # marks it so it is never mistaken for (or paid as) a participant's.
    Column("session_id", String(32), primary_key=True),
    Column("persona", Text, nullable=False),
    Column("intent", Text, nullable=False),
    Column("model", String(128), nullable=False),  # the model behind the simulated writer
    Column("created_at", Float, nullable=False),
)

simulated_conversations = Table(
    "simulated_conversations",
    metadata,
    # How a simulated chat user's conversation went (CollabLLM's user simulator, spec B4.2):
    # the goal document it held and why the conversation ended, for `study report`'s comparison
    # of simulated with human conversations.
    Column("session_id", String(32), primary_key=True),
    Column("goal_source", String(16), nullable=False),  # file | drafted | notes
    Column("goal_document", Text, nullable=False),
    # termination_marker (the user said it was done), turn_limit, or fallback (the model's
    # answers were unusable and the persona's habit ended the chat once the study allowed it)
    Column("end_reason", String(24), nullable=False),
    Column("exchanges", Integer, nullable=False),
    Column("first_wish_to_end", Integer),  # the exchange the marker first came at, if ever
    Column("last_thought", Text, nullable=False),  # the user's reasoning at its last message
    Column("created_at", Float, nullable=False),
)


def mark(connection: Connection, session_id: str, *, persona: str, intent: str, model: str) -> None:
    connection.execute(
        simulated_sessions.insert().values(
            session_id=session_id, persona=persona, intent=intent, model=model,
            created_at=time.time(),
        )
    )  # fmt: skip


def simulated_ids(connection: Connection) -> set[str]:
    return {row[0] for row in connection.execute(select(simulated_sessions.c.session_id))}


def people_sessions(connection: Connection) -> int:
    """How many sessions people started: those `study simulate` did not mark."""
    from study.store.db import sessions

    return connection.execute(
        select(func.count()).select_from(sessions)
        .where(sessions.c.session_id.not_in(select(simulated_sessions.c.session_id)))
    ).scalar_one()  # fmt: skip


def record_conversation(connection: Connection, session_id: str, **values) -> None:
    """How a simulated chat conversation went (simulated_conversations' columns)."""
    connection.execute(
        simulated_conversations.insert().values(session_id=session_id, created_at=time.time(), **values)
    )


def conversations(connection: Connection) -> dict[str, dict]:
    """session id -> its simulated_conversations row."""
    rows = connection.execute(select(simulated_conversations)).mappings()
    return {row["session_id"]: dict(row) for row in rows}
