"""Sessions written by simulated writers (`study simulate`): which ones, and who played them."""

from __future__ import annotations

import time

from sqlalchemy import Connection, select

from study.store.db import simulated_conversations, simulated_sessions


def mark(connection: Connection, session_id: str, *, persona: str, intent: str, model: str) -> None:
    connection.execute(
        simulated_sessions.insert().values(
            session_id=session_id, persona=persona, intent=intent, model=model,
            created_at=time.time(),
        )
    )  # fmt: skip


def simulated_ids(connection: Connection) -> set[str]:
    return {row[0] for row in connection.execute(select(simulated_sessions.c.session_id))}


def record_conversation(connection: Connection, session_id: str, **values) -> None:
    """How a simulated chat conversation went (simulated_conversations' columns)."""
    connection.execute(
        simulated_conversations.insert().values(session_id=session_id, created_at=time.time(), **values)
    )


def conversations(connection: Connection) -> dict[str, dict]:
    """session id -> its simulated_conversations row."""
    rows = connection.execute(select(simulated_conversations)).mappings()
    return {row["session_id"]: dict(row) for row in rows}
