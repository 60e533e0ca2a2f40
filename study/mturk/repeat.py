"""The server-side repeat check: with [mturk] once_per_worker, one session per worker.

The exclusion qualification (study.mturk.qualifications) keeps most repeat workers away, but a
worker can accept a second HIT before the qualification is granted; the task server therefore
checks the worker id itself when a new assignment arrives (study.server.participant.task).
"""

from __future__ import annotations

from sqlalchemy import Connection, exists, select

from study.config import Study
from study.store.db import sessions
from study.store.mturk import mturk_assignments

ACCEPTED_WORK = ("Submitted", "Approved")


def once_per_worker(study: Study) -> bool:
    return bool(study.raw.get("mturk", {}).get("once_per_worker", False))


def synced_assignment():
    """The condition "this session's assignment was synced from MTurk for its worker, submitted
    or approved" (a rejected one is not a participant's accepted work; study.store.verified)."""
    return exists().where(
        mturk_assignments.c.assignment_id == sessions.c.assignment_id,
        mturk_assignments.c.worker_id == sessions.c.worker_id,
        mturk_assignments.c.status.in_(ACCEPTED_WORK),
    )


def earlier_session(connection: Connection, worker_id: str, assignment_id: str) -> dict | None:
    """A session this worker has for another assignment that `study mturk sync` has seen at
    MTurk, if any. Sessions nobody has confirmed do not count: anyone can open the task with
    someone else's worker id, and would otherwise lock that worker out (study.store.verified).
    """
    row = (
        connection.execute(
            select(sessions)
            .where(sessions.c.worker_id == worker_id, sessions.c.assignment_id != assignment_id)
            .where(synced_assignment())
            .order_by(sessions.c.created_at)
            .limit(1)
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


REFUSAL = (
    "You have already taken part in this study, and each worker may take part only once. "
    "Please return this HIT; thank you for your interest."
)
