"""Submissions: the finished sessions of the reviewed rounds, under a pseudonym.

`collect` adds every session of a reviewed round that reached the completion page (writing,
self-evaluation and survey done: what the writer submits with the HIT) and is not yet listed,
gives it a random pseudonym, and applies the automatic disqualification rule
(study.review.rules, rule 2), writing the decision to the audit log. It is cheap and idempotent,
so the workspace calls it whenever it builds a queue.

A writer who withdraws (`study withdraw --study`) keeps their submissions listed here, with any
ratings given before (the audit log is not rewritten), but `in_review` leaves them out of all
the workspace shows and counts: reviewers no longer read or rate that text.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import Connection, select

from study import control_arm
from study.config import Study
from study.review import audit, rounds, rules
from study.review import settings as review_settings
from study.store import sessions as session_store
from study.store.db import sessions
from study.store.coordination import take_turn
from study.store.review_tables import review_submissions
from study.store.withdrawals import withdrawn_submission_ids

# Pseudonyms avoid look-alike characters (0/O, 1/I/L), as verification codes do.
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def new_pseudonym() -> str:
    return "S-" + "".join(secrets.choice(_ALPHABET) for _ in range(8))


def collect(connection: Connection, study: Study) -> list[str]:
    """List new submissions; returns their pseudonyms. A study on a paradigm's own path (a chat
    study's conversations) is not reviewed here: the workspace replays CoAuthor logs and counts
    Tab requests, which its sessions have neither of (its HITs are reviewed by `study mturk
    review`)."""
    if study.paradigm != "writing":
        return []
    settings = review_settings.from_study(study)
    # Pages that collect at once take turns: on PostgreSQL two reviewers opening the workspace
    # as a writer finished would both list the session, and one would get an error page.
    take_turn(connection, "review:submissions")
    known = select(review_submissions.c.session_id)
    query = (
        select(sessions.c.session_id, sessions.c.completed_at, sessions.c.condition)
        .where(sessions.c.stage == "complete", sessions.c.session_id.not_in(known))
        .order_by(sessions.c.completed_at, sessions.c.session_id)
    )
    reviewed = settings.reviewed_rounds
    no_assistant = control_arm.control_names(study.conditions)
    added = []
    for name in reviewed or (None,):
        chosen = query if name is None else query.where(rounds.sessions_in(study, name))
        for session_id, completed_at, condition in connection.execute(chosen).all():
            pseudonym = new_pseudonym()
            # A control arm's writer had no AI to ask (study.control_arm): rule 2 does not apply.
            needed = 0 if condition in no_assistant else settings.min_ai_requests
            reason = rules.disqualification(session_store.ai_requests(connection, session_id), needed)
            connection.execute(
                review_submissions.insert().values(
                    submission_id=pseudonym,
                    session_id=session_id,
                    round=name,
                    created_at=completed_at or time.time(),
                    disqualified=reason,
                )
            )
            if reason:
                audit.record(
                    connection, "rules", audit.DECISION_DISQUALIFY, pseudonym, reason=reason
                )
            added.append(pseudonym)
    return added


def all_submissions(connection: Connection) -> list[dict]:
    """Every submission in queue order (oldest first)."""
    rows = connection.execute(
        select(review_submissions).order_by(
            review_submissions.c.created_at, review_submissions.c.submission_id
        )
    ).mappings()
    return [dict(row) for row in rows]


def withdrawn(connection: Connection) -> set[str]:
    """The submissions of writers who withdrew (`study withdraw --study`, study.store.withdrawals):
    reviewers no longer read or rate them, and `study qualify` pays their work without an outcome.
    Their ratings stay stored (and in the audit log) but count nowhere."""
    return withdrawn_submission_ids(connection)


def in_review(connection: Connection) -> list[dict]:
    """Every submission the workspace shows, in queue order: all but `withdrawn` ones."""
    gone = withdrawn(connection)
    return [s for s in all_submissions(connection) if s["submission_id"] not in gone]


def get(connection: Connection, submission_id: str) -> dict | None:
    row = (
        connection.execute(
            select(review_submissions).where(review_submissions.c.submission_id == submission_id)
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None
