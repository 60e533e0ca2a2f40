"""The server-side repeat check: with [mturk] once_per_worker, one session per worker.

The exclusion qualification (study.mturk.qualifications) keeps most repeat workers away, but a
worker can accept a second HIT before the qualification is granted; the task server therefore
checks the worker id itself when a new assignment arrives (study.server.participant.task).

A judge of the study's judging round (study.judging) may not write in it either: they have read
its prompts and other writers' texts. They are kept out here rather than by a qualification:
the exclusion qualification would also close the round's other judging HITs to them (a judge
rates several tasks), and a qualification of judges' own would not reach the writers' HITs
posted before the round, which cannot take a new requirement.
"""

from __future__ import annotations

from sqlalchemy import Connection, exists, select

from study.config import Study
from study.mturk.hits import is_judging
from study.store.db import sessions
from study.store.mturk import mturk_assignments, mturk_hits

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


def judged(connection: Connection, worker_id: str) -> bool:
    """Whether this worker submitted a judging HIT of the study that `study mturk sync` has seen
    at MTurk (as for sessions, an assignment nobody confirmed does not count). A rejected one
    counts too: what bars a judge from writing is having read the texts, not being paid."""
    rows = connection.execute(
        select(mturk_hits.c.task_url)
        .join(mturk_assignments, (mturk_assignments.c.environment == mturk_hits.c.environment)
              & (mturk_assignments.c.hit_id == mturk_hits.c.hit_id))
        .where(mturk_assignments.c.worker_id == worker_id,
               mturk_assignments.c.status.in_((*ACCEPTED_WORK, "Rejected")))
    ).mappings()  # fmt: skip
    return any(is_judging(row) for row in rows)


REFUSAL = (
    "You have already taken part in this study, and each worker may take part only once. "
    "Please return this HIT; thank you for your interest."
)

JUDGE_REFUSAL = (
    "You have rated texts from this study, so you cannot also write in it. "
    "Please return this HIT; thank you for your interest."
)
