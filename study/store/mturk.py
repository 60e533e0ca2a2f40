"""MTurk's tables (study.mturk): its HITs, their extensions, assignments, qualifications and the
ledger of payments. A worker's session sits in `sessions` (study.store.db) with the worker id,
the assignment and the HIT that brought them.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Index, Integer, String, Table, Text, UniqueConstraint

from study.store.db import metadata

# -- MTurk (study.mturk) ----------------------------------------------------------------------
# Every MTurk row carries its `environment`, "sandbox:<AWS account id>" or "live:<account id>"
# (study.mturk.account): sandbox and live ids, workers and money never mix, and one account
# reached under two endpoint addresses keeps one ledger.

mturk_hits = Table(
    "mturk_hits",
    metadata,
    Column("environment", String(255), primary_key=True),
    # Written before CreateHITWithHITType is called and sent as its UniqueRequestToken and
    # RequesterAnnotation, so a post that crashed can find its HIT again (study.mturk.hits).
    Column("request_token", String(64), primary_key=True),
    Column("hit_id", String(64)),  # NULL until MTurk has answered
    Column("hit_type_id", String(64)),
    Column("max_assignments", Integer, nullable=False),
    Column("reward", String(16), nullable=False),  # USD as a decimal string, e.g. "2.50"
    Column("task_url", Text, nullable=False),
    # planned | failed | an MTurk HITStatus (Assignable, Unassignable, Reviewable, ...) | Disposed
    Column("status", String(16), nullable=False),
    Column("expiration", Float),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float),
    UniqueConstraint("environment", "hit_id", name="one_row_per_hit"),
)

mturk_extensions = Table(
    "mturk_extensions",
    metadata,
    Column("environment", String(255), primary_key=True),
    # The intent to add assignments to a HIT, written (with the budget's reservation) before
    # CreateAdditionalAssignmentsForHIT is sent with this as its UniqueRequestToken, so a re-run
    # after a crash finishes it instead of adding the assignments twice (study.mturk.hits).
    Column("request_token", String(64), primary_key=True),
    Column("hit_id", String(64), nullable=False),
    Column("assignments_before", Integer, nullable=False),
    Column("assignments_added", Integer, nullable=False),
    Column("status", String(10), nullable=False),  # intended | done | cancelled
    Column("created_at", Float, nullable=False),
    Column("settled_at", Float),
)

mturk_assignments = Table(
    "mturk_assignments",
    metadata,
    Column("environment", String(255), primary_key=True),
    Column("assignment_id", String(64), primary_key=True),
    Column("hit_id", String(64), nullable=False),
    Column("worker_id", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # Submitted | Approved | Rejected
    Column("submitted_at", Float),
    Column("answer", Text),  # QuestionFormAnswers XML as MTurk stores it
    Column("submitted_code", String(64)),  # the verification code found in the answer
    Column("session_id", String(32)),  # the local session bound to this assignment, if any
    Column("requester_feedback", Text),
    Column("excluded_at", Float),  # when the study's exclusion qualification was granted
    Column("synced_at", Float, nullable=False),
    Index("mturk_assignments_by_worker", "environment", "worker_id"),
)

mturk_missing_submissions = Table(
    "mturk_missing_submissions",
    metadata,
    Column("environment", String(255), primary_key=True),
    # A session bound to an assignment MTurk listed no submission for (returned, abandoned, or
    # still being worked on): `sync` warns when it first finds one, then only counts it, so the
    # warning does not come back at every run (study.mturk.assignments).
    Column("session_id", String(32), primary_key=True),
    Column("first_seen_at", Float, nullable=False),
)

mturk_qualifications = Table(
    "mturk_qualifications",
    metadata,
    Column("environment", String(255), primary_key=True),
    Column("qualification_type_id", String(64), primary_key=True),
    Column("name", String(255), nullable=False),
    Column("role", String(16), nullable=False),  # custom | exclusion
    Column("created_at", Float, nullable=False),
    UniqueConstraint("environment", "name", name="one_qualification_per_name"),
)

mturk_payments = Table(
    "mturk_payments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("environment", String(255), nullable=False),
    # Derived from what is paid (study.mturk.ledger); a retried command finds its own entry.
    Column("entry_key", String(64), nullable=False),
    Column("kind", String(8), nullable=False),  # reward | bonus
    Column("hit_id", String(64)),
    Column("assignment_id", String(64)),  # NULL for a reward slot not yet taken by a worker
    Column("worker_id", String(64)),
    Column("amount", String(16), nullable=False),  # USD, decimal string
    Column("fee", String(16), nullable=False),  # MTurk's commission on `amount`, decimal string
    Column("reason", Text),
    # intended (committed to the budget, not known to be paid) | confirmed (paid) |
    # cancelled (will not be paid: rejected, never taken, refused by MTurk)
    Column("status", String(10), nullable=False),
    Column("request_token", String(64)),
    Column("created_at", Float, nullable=False),
    Column("settled_at", Float),
    Column("note", Text),
    UniqueConstraint("environment", "entry_key", name="one_payment_per_key"),
    Index("mturk_payments_by_assignment", "environment", "assignment_id"),
)
