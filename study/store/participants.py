"""A participant's sessions, for designs in which one participant writes several times
(`[design] assignment = "within"`, study.server.within). A participant is a worker id, else a
lab access code (the two never mix: an MTurk session has no access code)."""

from __future__ import annotations

from sqlalchemy import Connection, func, select

from study.store.db import sessions


def participant_key(session: dict) -> tuple[str, str] | None:
    if session.get("worker_id"):
        return ("worker_id", session["worker_id"])
    if session.get("access_code"):
        return ("access_code", session["access_code"])
    return None


def assigned_conditions(connection: Connection, key: tuple[str, str], *, excluding: str) -> list[str]:
    """The conditions this participant's other sessions were given, oldest first."""
    column = sessions.c[key[0]]
    rows = connection.execute(
        select(sessions.c.condition).where(column == key[1], sessions.c.condition.is_not(None),
                                           sessions.c.session_id != excluding)
        .order_by(sessions.c.created_at)
    )  # fmt: skip
    return [row[0] for row in rows]


def arrival_rank(connection: Connection, key: tuple[str, str]) -> int:
    """How many participants began before this one (their first session is older): the
    participant's row of the Latin square."""
    firsts = []
    for name in ("worker_id", "access_code"):
        column = sessions.c[name]
        firsts.append(
            select(column.label("who"), func.min(sessions.c.created_at).label("first"))
            .where(column.is_not(None)).group_by(column).subquery()
        )  # fmt: skip
    own = connection.execute(
        select(func.min(sessions.c.created_at)).where(sessions.c[key[0]] == key[1])
    ).scalar_one()
    if own is None:
        return 0
    return sum(
        connection.execute(select(func.count()).select_from(first).where(first.c.first < own)).scalar_one()
        for first in firsts
    )


def assigned_sessions(
    connection: Connection, key: tuple[str, str] | None = None
) -> list[tuple[tuple[str, str], str, str | None]]:
    """Every session given a condition (only participant `key`'s when given), oldest first:
    (participant key, condition, stored within_order or None). Within-subjects studies are
    lab-sized (tens of participants), so the arm lists are compared in Python rather than by
    parsing JSON in SQL."""
    query = (
        select(sessions.c.worker_id, sessions.c.access_code, sessions.c.condition, sessions.c.within_order)
        .where(sessions.c.condition.is_not(None))
        .order_by(sessions.c.created_at, sessions.c.session_id)
    )  # fmt: skip
    if key is not None:
        query = query.where(sessions.c[key[0]] == key[1])
    rows = connection.execute(query)
    found = []
    for worker_id, access_code, condition, within_order in rows:
        key = participant_key({"worker_id": worker_id, "access_code": access_code})
        if key is not None:
            found.append((key, condition, within_order))
    return found


def arms_ending_after(connection: Connection, key: tuple[str, str], session: dict) -> set[str]:
    """The conditions of this participant's other sessions whose writing has not ended before
    this session's did: still being written (another tab, an assignment left open), or ended
    later (ties go by session id, so of two sessions exactly one ends after the other)."""
    mine = (session.get("writing_finished_at") or float("inf"), session["session_id"])
    rows = connection.execute(
        select(sessions.c.session_id, sessions.c.condition, sessions.c.writing_finished_at)
        .where(sessions.c[key[0]] == key[1], sessions.c.condition.is_not(None),
               sessions.c.session_id != session["session_id"])
    )  # fmt: skip
    return {condition for session_id, condition, ended in rows if ended is None or (ended, session_id) > mine}
