"""Sessions written by simulated writers (`study simulate`): which ones, and who played them."""

from __future__ import annotations

import time

from sqlalchemy import Connection, select

from study.store.db import simulated_sessions


def mark(connection: Connection, session_id: str, *, persona: str, intent: str, model: str) -> None:
    connection.execute(
        simulated_sessions.insert().values(
            session_id=session_id, persona=persona, intent=intent, model=model,
            created_at=time.time(),
        )
    )  # fmt: skip


def simulated_ids(connection: Connection) -> set[str]:
    return {row[0] for row in connection.execute(select(simulated_sessions.c.session_id))}
