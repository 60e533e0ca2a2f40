"""The tables of rounds and reviewing (study.review, whose modules hold the queries).

Reviewers see a submission by its random pseudonym (review_submissions.submission_id), never
by a worker id: the way from a submission to its session, and so to the worker, stays here.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Index, Integer, String, Table, Text

from study.store.db import metadata

session_rounds = Table(
    "session_rounds",
    metadata,
    # Which round of the study ([[rounds]] in study.toml) a session was started in; a session
    # without a row belongs to the study's default round (study.review.rounds).
    Column("session_id", String(32), primary_key=True),
    Column("round", String(64), nullable=False),
    Index("session_rounds_by_round", "round"),
)

reviewers = Table(
    "reviewers",
    metadata,
    Column("reviewer_id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),  # salted scrypt (werkzeug.security)
    Column("role", String(16), nullable=False),  # reviewer | researcher
    Column("active", Integer, nullable=False, default=1),
    Column("created_at", Float, nullable=False),
)

review_logins = Table(
    "review_logins",
    metadata,
    # The cookie holds a random token; only its SHA-256 is stored, so a copy of the database
    # cannot be used to log in.
    Column("token_hash", String(64), primary_key=True),
    Column("reviewer_id", Integer, nullable=False),
    Column("csrf_token", String(64), nullable=False),  # sent back with every POST
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("ended_at", Float),  # logged out
)

review_submissions = Table(
    "review_submissions",
    metadata,
    Column("submission_id", String(16), primary_key=True),  # the pseudonym reviewers see
    Column("session_id", String(32), nullable=False, unique=True),
    Column("round", String(64)),
    Column("created_at", Float, nullable=False),
    # Why the rules disqualified the session without review (no interaction with the AI), or NULL.
    Column("disqualified", Text),
)

review_assignments = Table(
    "review_assignments",
    metadata,
    Column("submission_id", String(16), primary_key=True),
    Column("reviewer_id", Integer, primary_key=True, autoincrement=False),
    Column("assigned_at", Float, nullable=False),
)

review_ratings = Table(
    "review_ratings",
    metadata,
    Column("submission_id", String(16), primary_key=True),
    Column("reviewer_id", Integer, primary_key=True, autoincrement=False),
    Column("score", Integer, nullable=False),
    Column("comment", Text, nullable=False, default=""),
    Column("rated_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    # 1 for the first rating, one more at each change: a page saves only over the version it
    # showed (study.review.ratings.rate's `seen`), so a stale tab cannot overwrite unnoticed.
    Column("version", Integer, nullable=False, default=1),
)

review_decisions = Table(
    "review_decisions",
    metadata,
    # A researcher's adjudication: the final score, whatever the ratings say.
    Column("submission_id", String(16), primary_key=True),
    Column("score", Integer, nullable=False),
    Column("reviewer_id", Integer, nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("decided_at", Float, nullable=False),
)

review_audit = Table(
    "review_audit",
    metadata,
    # Append-only: every rating, edit, decision, grant and payment, with who and when.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False),
    Column("actor", String(64), nullable=False),
    Column("action", String(32), nullable=False),
    Column("submission_id", String(16)),
    Column("detail", Text, nullable=False, default="{}"),  # JSON
    Index("review_audit_by_submission", "submission_id", "id"),
)

review_grants = Table(
    "review_grants",
    metadata,
    # The study's qualification as `study qualify` granted it, per environment (sandbox, live).
    Column("environment", String(255), primary_key=True),
    Column("submission_id", String(16), primary_key=True),
    Column("worker_id", String(64), nullable=False),
    Column("qualification_type_id", String(64), nullable=False),
    Column("value", Integer, nullable=False),
    Column("granted_at", Float, nullable=False),
)
