"""Prolific's tables (study.prolific), and the few questions the task server asks of them.

Every row carries its `environment`, "prolific:<researcher id>" (study.prolific.context): two
workspaces, or the emulator and the real service, never share studies, participants or money.
A Prolific participant's session sits in `sessions` as an MTurk worker's does: the PID is its
`worker_id`, Prolific's SESSION_ID its `assignment_id` and the STUDY_ID its `hit_id`, so
releases pseudonymise PIDs exactly as worker ids and reviewers never see them.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Connection,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    exists,
    select,
)

from study.store.db import metadata, sessions

prolific_studies = Table(
    "prolific_studies",
    metadata,
    Column("environment", String(255), primary_key=True),
    # Written before POST studies/ and sent inside the study's internal_name, so a draft that
    # crashed before Prolific answered is found again rather than created twice.
    Column("request_token", String(64), primary_key=True),
    Column("study_id", String(64)),  # NULL until Prolific has answered
    Column("name", Text, nullable=False),
    Column("round", String(64)),  # the review round its URL enters (study.review.rounds)
    Column("reward", Integer, nullable=False),  # per place, in the currency's minor unit
    Column("places", Integer, nullable=False),
    Column("task_url", Text, nullable=False),  # the external_study_url, parameters included
    Column("completion_code", String(64), nullable=False),  # one per study, random
    # The total of places an add asked for, written (with its reservation) before the PATCH
    # and cleared once Prolific has answered: a re-run after a lost answer finishes the add
    # instead of adding the places twice (study.prolific.studies.add_places).
    Column("places_pending", Integer),
    # planned (asked, no answer yet) | a Prolific status (UNPUBLISHED, ACTIVE, PAUSED, AWAITING REVIEW, ...)
    Column("status", String(24), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float),
    UniqueConstraint("environment", "study_id", name="one_row_per_prolific_study"),
    Index("prolific_studies_by_study", "study_id"),
)

prolific_submissions = Table(
    "prolific_submissions",
    metadata,
    Column("environment", String(255), primary_key=True),
    Column("submission_id", String(64), primary_key=True),
    Column("study_id", String(64), nullable=False),
    Column("participant_id", String(64), nullable=False),
    # ACTIVE | AWAITING REVIEW | APPROVED | REJECTED | RETURNED | TIMED-OUT
    Column("status", String(24), nullable=False),
    Column("started_at", Text),
    Column("completed_at", Text),
    Column("study_code", String(64)),  # the completion code the participant came back with
    Column("session_id", String(32)),  # the local session bound to it, if any
    Column("feedback", Text),  # the message sent with a rejection
    Column("synced_at", Float, nullable=False),
    Index("prolific_submissions_by_participant", "environment", "participant_id"),
)

prolific_payments = Table(
    "prolific_payments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("environment", String(255), nullable=False),
    Column("entry_key", String(64), nullable=False),  # derived from what is paid
    Column("kind", String(8), nullable=False),  # reward | bonus
    Column("study_id", String(64)),
    Column("submission_id", String(64)),  # NULL for a place nobody has taken yet
    Column("participant_id", String(64)),
    Column("amount", Integer, nullable=False),  # minor unit
    Column("fee", Integer, nullable=False),  # Prolific's fee and VAT on it, minor unit
    # The ISO code of the workspace currency the entry was written in (users/me at the time):
    # pence and cents are both "minor units", and a study can move to a workspace paying in
    # another. NULL: written before entries recorded it; unknown, never guessed from today's
    # workspace (README, Prolific, "Money"), until the researcher states it.
    Column("currency", String(3)),
    Column("reason", Text),
    # intended (counted against the cap, not known paid) | confirmed | cancelled | unreserved
    Column("status", String(10), nullable=False),
    # Bonuses are two calls (study.prolific.payments): the bulk payment Prolific set up, and
    # the moment the non-idempotent pay call was about to be sent, written before sending it.
    Column("bulk_payment_id", String(64)),
    Column("pay_sent_at", Float),
    Column("created_at", Float, nullable=False),
    Column("settled_at", Float),
    Column("note", Text),
    UniqueConstraint("environment", "entry_key", name="one_prolific_payment_per_key"),
    Index("prolific_payments_by_submission", "environment", "submission_id"),
)

prolific_groups = Table(
    "prolific_groups",
    metadata,
    Column("environment", String(255), primary_key=True),
    Column("role", String(16), primary_key=True),  # qualified | done (the repeat block)
    Column("group_id", String(64), nullable=False),
    Column("name", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

prolific_members = Table(
    "prolific_members",
    metadata,
    # Who this study put in its groups, and with what score (qualified), so re-running adds
    # nobody twice and removes whom a later adjudication failed.
    Column("environment", String(255), primary_key=True),
    Column("role", String(16), primary_key=True),
    Column("participant_id", String(64), primary_key=True),
    Column("value", Integer),
    Column("added_at", Float, nullable=False),
)

ACCEPTED_WORK = ("AWAITING REVIEW", "APPROVED")


def study_row(connection: Connection, study_id: str) -> dict | None:
    """This study's record of a Prolific study, in whichever environment (Prolific's ids are
    unique): what the task server needs for a participant's STUDY_ID."""
    row = (
        connection.execute(select(prolific_studies).where(prolific_studies.c.study_id == study_id))
        .mappings()
        .first()
    )
    return dict(row) if row else None


def synced_submission():
    """The condition "this session's submission was synced from Prolific for its participant"
    (study.store.verified)."""
    return exists().where(
        prolific_submissions.c.submission_id == sessions.c.assignment_id,
        prolific_submissions.c.participant_id == sessions.c.worker_id,
        prolific_submissions.c.status.in_(ACCEPTED_WORK),
    )


def session_for(connection: Connection, participant_id: str, study_id: str) -> dict | None:
    """The participant's session for this Prolific study: one per participant and study."""
    row = (
        connection.execute(
            select(sessions)
            .where(sessions.c.worker_id == participant_id, sessions.c.hit_id == study_id)
            .order_by(sessions.c.created_at)
            .limit(1)
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def earlier_session(connection: Connection, participant_id: str, study_id: str) -> dict | None:
    """A session of this participant for another Prolific study of this study that `sync` has
    seen at Prolific ([prolific] once_per_participant). Unconfirmed sessions do not count:
    anyone can open the task with someone else's PID."""
    row = (
        connection.execute(
            select(sessions)
            .where(sessions.c.worker_id == participant_id, sessions.c.hit_id != study_id)
            .where(synced_submission())
            .limit(1)
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def submitted(connection: Connection, submission_id: str) -> bool:
    """Whether Prolific has the participant's submission (`sync` saw it finished)."""
    return (
        connection.execute(
            select(prolific_submissions.c.status).where(
                prolific_submissions.c.submission_id == submission_id,
                prolific_submissions.c.status.in_(("AWAITING REVIEW", "APPROVED", "REJECTED")),
            )
        ).first()
        is not None
    )


def left(connection: Connection, submission_id: str) -> str | None:
    """RETURNED or TIMED-OUT when `sync` saw the participant leave this submission (Prolific
    then never takes it: the place went to someone else); else None."""
    row = connection.execute(
        select(prolific_submissions.c.status).where(
            prolific_submissions.c.submission_id == submission_id,
            prolific_submissions.c.status.in_(("RETURNED", "TIMED-OUT")),
        )
    ).first()
    return row.status if row else None
