"""The queue: which submission a reviewer rates next.

Submissions are handed out one at a time, when a reviewer asks for the next one, so reviewers
can come and go and new submissions join as writers finish. The rule (`next_for`):
  1. a submission already assigned to the reviewer and not yet rated by them comes first,
     unless their assignment expired and others have since filled every place;
  2. otherwise, among submissions the reviewer has not been assigned, that are not disqualified
     or adjudicated and that hold fewer than `ratings_per_submission` places, take the one
     closest to complete (most places held), then the oldest. Finishing submissions first lets
     outcomes, and so qualifications, flow while reviewing goes on.
A place is held by a rating, or by an assignment not yet rated that is younger than
`assignment_hours` (a reviewer who walked away does not block a submission for ever); a
disabled reviewer's assignments hold nothing from then on (`expire_assignments`).
So each submission gets its ratings from different reviewers, and a reviewer rates it at most once.
A submission whose writer withdrew (study.store.withdrawals) is in no queue and no
count: nobody is handed it, nor may rate it, even if it was assigned before the withdrawal.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Connection, select, update

from study.review import audit
from study.store.coordination import take_turn
from study.store.review_tables import review_assignments, review_decisions, review_ratings, review_submissions
from study.store.withdrawals import withdrawn_submission_ids


@dataclass(frozen=True)
class Progress:
    rated: int  # submissions this reviewer has rated
    assigned: int  # assigned to them and not yet rated
    available: int  # more they could still be given

    @property
    def total(self) -> int:
        return self.rated + self.assigned + self.available

    @property
    def nothing_to_rate(self) -> bool:
        """Nothing waits for this reviewer now: their part is done until new submissions come."""
        return not self.assigned and not self.available


def _state(connection: Connection):
    gone = withdrawn_submission_ids(connection)
    rated = defaultdict(set)
    for submission_id, reviewer_id in connection.execute(
        select(review_ratings.c.submission_id, review_ratings.c.reviewer_id)
    ):
        if submission_id not in gone:
            rated[submission_id].add(reviewer_id)
    assigned = defaultdict(dict)
    for submission_id, reviewer_id, at in connection.execute(
        select(
            review_assignments.c.submission_id,
            review_assignments.c.reviewer_id,
            review_assignments.c.assigned_at,
        )
    ):
        if submission_id not in gone:
            assigned[submission_id][reviewer_id] = at
    decided = set(connection.execute(select(review_decisions.c.submission_id)).scalars())
    open_ = [
        dict(row)
        for row in connection.execute(
            select(review_submissions)
            .where(review_submissions.c.disqualified.is_(None))
            .order_by(review_submissions.c.created_at, review_submissions.c.submission_id)
        ).mappings()
        if row["submission_id"] not in decided and row["submission_id"] not in gone
    ]
    return rated, assigned, open_


def _held(rated: set, assigned: dict, now: float, hold_seconds: float) -> int:
    waiting = [r for r, at in assigned.items() if r not in rated and now - at < hold_seconds]
    return len(rated) + len(waiting)


def _waiting_for(rated: set, assigned: dict, reviewer_id, now, hold_seconds, needed) -> bool:
    """Whether the submission still waits for this reviewer's rating: assigned to them and
    unrated, and their place either still held or not since filled by others (rule 1 must
    not hand back a submission whose expired place went to another reviewer who rated it)."""
    if reviewer_id not in assigned or reviewer_id in rated:
        return False
    return now - assigned[reviewer_id] < hold_seconds or _held(rated, assigned, now, hold_seconds) < needed


def _candidates(rated, assigned, open_, reviewer_id, needed, now, hold_seconds) -> list[dict]:
    found = []
    for submission in open_:
        key = submission["submission_id"]
        if reviewer_id in rated[key] or reviewer_id in assigned[key]:
            continue
        held = _held(rated[key], assigned[key], now, hold_seconds)
        if held < needed:
            found.append((-held, submission["created_at"], key, submission))
    return [item[-1] for item in sorted(found, key=lambda item: item[:3])]


def next_for(
    connection: Connection, reviewer: dict, *, needed: int, assignment_hours: float
) -> str | None:
    """The submission the reviewer should rate next (assigning it if new), or None: done."""
    # Reviewers asking at once take turns: on PostgreSQL two who both counted a submission's
    # last free place would both be assigned it, past `needed`, while another waits.
    take_turn(connection, "review:queue")
    now = time.time()
    rated, assigned, open_ = _state(connection)
    reviewer_id = reviewer["reviewer_id"]
    hold_seconds = assignment_hours * 3600
    mine = sorted(
        (assigned[s["submission_id"]][reviewer_id], s["submission_id"])
        for s in open_
        if _waiting_for(
            rated[s["submission_id"]], assigned[s["submission_id"]], reviewer_id, now,
            hold_seconds, needed,
        )
    )  # fmt: skip
    if mine:
        return mine[0][1]
    candidates = _candidates(rated, assigned, open_, reviewer_id, needed, now, hold_seconds)
    if not candidates:
        return None
    chosen = candidates[0]["submission_id"]
    connection.execute(
        review_assignments.insert().values(
            submission_id=chosen, reviewer_id=reviewer_id, assigned_at=now
        )
    )
    audit.record(connection, reviewer["name"], audit.SUBMISSION_ASSIGN, chosen)
    return chosen


def waits_for(
    connection: Connection, submission_id: str, reviewer_id: int, *, needed: int,
    assignment_hours: float,
) -> bool:  # fmt: skip
    """Whether the reviewer's unrated assignment may still be rated (`_waiting_for`)."""
    rated, assigned, _ = _state(connection)
    return _waiting_for(
        rated[submission_id], assigned[submission_id], reviewer_id, time.time(),
        assignment_hours * 3600, needed,
    )  # fmt: skip


def expire_assignments(connection: Connection, reviewer_id: int) -> None:
    """The reviewer's places, as if left unrated too long: a disabled reviewer cannot rate, so
    their submissions go to others at once, and if the account comes back its old places count
    as expired (rule 1 hands one back only while nobody else filled it)."""
    connection.execute(
        update(review_assignments)
        .where(review_assignments.c.reviewer_id == reviewer_id)
        .values(assigned_at=0.0)
    )


def is_assigned(connection: Connection, submission_id: str, reviewer_id: int) -> bool:
    return (
        connection.execute(
            select(review_assignments.c.assigned_at).where(
                review_assignments.c.submission_id == submission_id,
                review_assignments.c.reviewer_id == reviewer_id,
            )
        ).first()
        is not None
    )


def progress(
    connection: Connection, reviewer: dict, *, needed: int, assignment_hours: float
) -> Progress:
    now = time.time()
    rated, assigned, open_ = _state(connection)
    reviewer_id = reviewer["reviewer_id"]
    done = sum(reviewer_id in ids for ids in rated.values())
    waiting = sum(
        _waiting_for(
            rated[s["submission_id"]], assigned[s["submission_id"]], reviewer_id, now,
            assignment_hours * 3600, needed,
        )
        for s in open_
    )  # fmt: skip
    available = len(
        _candidates(rated, assigned, open_, reviewer_id, needed, now, assignment_hours * 3600)
    )
    return Progress(rated=done, assigned=waiting, available=available)
