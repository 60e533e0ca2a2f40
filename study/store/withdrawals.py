"""Participants who withdrew consent: their sessions leave every reading of the study folder.

`study withdraw WORKER_ID --study DIR` adds a row here (study.release.cli). A writer is named as
metadata.csv names them (study.export.coauthor): the worker id, else the lab's access code, so a
lab participant withdraws by their code. `study.store.sessions.all_sessions` leaves their
sessions out, and with it the export (every format), the report and a judging round's items;
`study status` counts them apart; the judging results, the review files of the export and
`study qualify`'s grants leave them out by `withdrawn_session_ids`/`withdrawn_ids`, and the
reviewers' workspace (queue, pages, counts) by `withdrawn_submission_ids`, whose submissions
`study qualify` pays without a review outcome, revoking a qualification granted before the
withdrawal (study.mturk.qualify, study.prolific.qualify); the task server starts no new session
for them and takes an unfinished one no further (`recorded`, study.review.rounds.entry_refusal
and resume_refusal). Nothing is deleted:
the rows stay for the payment records (the MTurk and Prolific ledgers are not touched, the
writers were paid for the work), and a withdrawal recorded by mistake can be seen and undone
by hand. The study database already holds raw worker ids, so the id is kept as given; the
release key's own list (study.release.withdraw) keeps it encrypted beside the key instead.
"""

from __future__ import annotations

import time

from sqlalchemy import Column, ColumnElement, Connection, Float, String, Table, Text, func, or_, select

from study.store.db import metadata, sessions
from study.store.review_tables import review_submissions

withdrawals = Table(
    "withdrawals",
    metadata,
    # The writer as the export names them: sessions.worker_id, else sessions.access_code.
    Column("worker_id", String(64), primary_key=True),
    Column("recorded", String(10), nullable=False),  # YYYY-MM-DD, as the key's list keeps it
    Column("reason", Text, nullable=False, default=""),
    Column("recorded_at", Float, nullable=False),
)


def writer():
    """Who wrote a session, as metadata.csv names them: the worker id, else the access code."""
    return func.coalesce(sessions.c.worker_id, sessions.c.access_code)


def not_withdrawn() -> ColumnElement[bool]:
    """A `sessions` condition: the session's writer has not withdrawn. A session with neither a
    worker id nor an access code has nobody to withdraw (NOT IN would drop it: NULL)."""
    return or_(writer().is_(None), writer().not_in(select(withdrawals.c.worker_id)))


def withdrawn_ids(connection: Connection) -> set[str]:
    return set(connection.execute(select(withdrawals.c.worker_id)).scalars())


def withdrawn_session_ids(connection: Connection) -> set[str]:
    """The sessions of writers who withdrew (for a table keyed by session, e.g. judging ratings)."""
    return set(connection.execute(select(sessions.c.session_id).where(~not_withdrawn())).scalars())


def withdrawn_submission_ids(connection: Connection) -> set[str]:
    """The review submissions (study.review.submissions) of writers who withdrew: the reviewers'
    workspace shows and counts none of them, and `study qualify` pays them unreviewed."""
    return set(connection.execute(
        select(review_submissions.c.submission_id)
        .join(sessions, sessions.c.session_id == review_submissions.c.session_id)
        .where(~not_withdrawn())
    ).scalars())  # fmt: skip


def recorded(connection: Connection, worker_id: str) -> dict | None:
    row = connection.execute(
        select(withdrawals).where(withdrawals.c.worker_id == worker_id)
    ).mappings().first()
    return dict(row) if row else None


def record(connection: Connection, worker_id: str, *, today: str, reason: str = "") -> tuple[dict, bool]:
    """Add the writer to the withdrawals. Returns (the row, True if it was new)."""
    found = recorded(connection, worker_id)
    if found is not None:
        return found, False
    row = {"worker_id": worker_id, "recorded": today, "reason": reason, "recorded_at": time.time()}
    connection.execute(withdrawals.insert().values(**row))
    return row, True


def writers(connection: Connection) -> set[str]:
    """Every writer the study has a session of (the withdrawn among them)."""
    return set(connection.execute(select(writer()).where(writer().is_not(None)).distinct()).scalars())


def left_out(connection: Connection) -> tuple[int, int]:
    """(sessions, writers) the withdrawals leave out of what the study folder's readers see."""
    sessions_out, writers_out = connection.execute(
        select(func.count(), func.count(writer().distinct())).where(~not_withdrawn())
    ).one()
    return sessions_out, writers_out


def left_out_line(sessions_out: int, writers_out: int) -> str | None:
    """What a command that prints counts says of them; None while nobody withdrew."""
    if not sessions_out:
        return None
    plural = "s" if writers_out != 1 else ""
    return (f"Withdrawn: {sessions_out} session(s) of {writers_out} writer{plural} who withdrew "
            "(study withdraw), left out")
