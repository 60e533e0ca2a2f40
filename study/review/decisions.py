"""Decisions: researchers' adjudications, and the outcome of every submission.

The rules live in study.review.rules (pure); this module feeds them what the database holds:
the ratings, the automatic disqualification and the adjudication of each submission.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Connection, and_, select, update

from study.config import Study
from study.review import accounts, audit, rules
from study.review import ratings as rating_store
from study.review import settings as review_settings
from study.review.rules import Outcome
from study.store.db import sessions
from study.store.coordination import take_turn
from study.store.review_tables import review_decisions, review_submissions


class StaleDecision(rating_store.RatingError):
    """A decision sent from a page that showed another decision than is stored now: another
    researcher (or this one in another tab) decided the submission after the page was opened."""


def stale_message(current: dict | None, by: str) -> str:
    if current is None:
        return (
            "Not decided: the decision this page showed is no longer stored. Reload the page to "
            "see the submission as it is now."
        )
    note = f' with the note "{current["note"]}"' if current["note"] else ""
    return (
        f"Not decided: {by} decided this submission {current['score']}{note} after this page was "
        "opened. Reload the page to read it; deciding again there replaces it."
    )


@dataclass(frozen=True)
class Judged:
    """A submission with its ratings and outcome."""

    submission: dict
    scores: tuple[int, ...]
    adjudicated: int | None
    outcome: Outcome

    @property
    def submission_id(self) -> str:
        return self.submission["submission_id"]


def adjudicate(
    connection: Connection, submission_id: str, researcher: dict, score: int, note: str, *, scores,
    seen: float | None | bool = False,
) -> None:
    """Record (or change) the researcher's final score for a submission. The researcher's own
    decision sent again (the decide button double-clicked, the form resent on reload) is no
    change: stored and logged once, its time left as it was. `seen`: the decided_at of the
    decision the page showed (None: none); any other decision stored now is not replaced
    unnoticed (StaleDecision). False (a client that sends none, a script): not checked."""
    if score not in scores:
        raise rating_store.RatingError(
            f"score must be one of {', '.join(map(str, sorted(scores)))}, got {score}"
        )
    note = note.strip()[: rating_store.MAX_COMMENT]
    values = {
        "score": score,
        "reviewer_id": researcher["reviewer_id"],
        "note": note,
        "decided_at": time.time(),
    }
    # Decisions on one submission take turns: on PostgreSQL two researchers (or a form sent
    # twice) would both find none, and the second insert would fail.
    take_turn(connection, f"review:decision:{submission_id}")
    before = adjudication(connection, submission_id)
    if before is not None and (before["score"], before["note"], before["reviewer_id"]) == (
        score, note, researcher["reviewer_id"]
    ):
        return
    if seen is not False and (before["decided_at"] if before else None) != seen:
        by = accounts.by_id(connection, before["reviewer_id"]) if before else None
        raise StaleDecision(stale_message(before, by["name"] if by else "another researcher"))
    if before is None:
        connection.execute(review_decisions.insert().values(submission_id=submission_id, **values))
    else:
        connection.execute(
            update(review_decisions)
            .where(review_decisions.c.submission_id == submission_id)
            .values(**values)
        )
    audit.record(
        connection,
        researcher["name"],
        audit.DECISION_ADJUDICATE,
        submission_id,
        score=score,
        note=note,
        previous_score=before["score"] if before else None,
    )


def adjudication(connection: Connection, submission_id: str) -> dict | None:
    row = (
        connection.execute(
            select(review_decisions).where(review_decisions.c.submission_id == submission_id)
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def judge(connection: Connection, study: Study, submissions: list[dict]) -> list[Judged]:
    """The outcome of each of `submissions` (rows of review_submissions)."""
    settings = review_settings.from_study(study)
    scores = defaultdict(list)
    for rating in rating_store.all_ratings(connection):
        scores[rating["submission_id"]].append(rating["score"])
    adjudicated = dict(
        connection.execute(select(review_decisions.c.submission_id, review_decisions.c.score)).all()
    )
    judged = []
    for submission in submissions:
        key = submission["submission_id"]
        found = rules.outcome(
            scores[key],
            needed=settings.ratings_per_submission,
            pass_mark=settings.pass_mark,
            max_spread=settings.max_spread,
            disqualified=submission["disqualified"],
            adjudicated=adjudicated.get(key),
        )
        judged.append(Judged(submission, tuple(scores[key]), adjudicated.get(key), found))
    return judged


def writer_condition(*, worker_id: str | None = None, access_code: str | None = None):
    """A SQL condition: sessions of this writer (an MTurk worker or a lab access code)."""
    if worker_id:
        return sessions.c.worker_id == worker_id
    if access_code:
        return and_(sessions.c.access_code == access_code, sessions.c.worker_id.is_(None))
    return None


def writer_passed(
    connection: Connection,
    study: Study,
    round_name: str,
    *,
    worker_id: str | None = None,
    access_code: str | None = None,
) -> bool:
    """Whether any of this writer's submissions to `round_name` passed."""
    writer = writer_condition(worker_id=worker_id, access_code=access_code)
    if writer is None:
        return False
    rows = connection.execute(
        select(review_submissions)
        .join(sessions, sessions.c.session_id == review_submissions.c.session_id)
        .where(writer, review_submissions.c.round == round_name)
    ).mappings()
    return any(j.outcome.passed for j in judge(connection, study, [dict(r) for r in rows]))
