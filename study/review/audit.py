"""The audit log: every rating, edit and decision, who made it and when.

Entries are only ever appended, in the same transaction as the change they describe, so the log
and the data cannot disagree. They name submissions by pseudonym and people by reviewer name;
worker ids never enter the log, because researchers read it in the workspace.
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, select

from study.store.coordination import clock
from study.store.review_tables import review_audit

# Actions, by the noun they change.
RATING_CREATE = "rating.create"
RATING_EDIT = "rating.edit"
DECISION_ADJUDICATE = "decision.adjudicate"
DECISION_DISQUALIFY = "decision.disqualify"
SUBMISSION_ASSIGN = "submission.assign"
QUALIFY_GRANT = "qualify.grant"
QUALIFY_PAY = "qualify.pay"
QUALIFY_REVOKE = "qualify.revoke"
REVIEWER_ADD = "reviewer.add"
REVIEWER_PASSWORD = "reviewer.password"
REVIEWER_DISABLE = "reviewer.disable"
LOGIN = "login"
LOGIN_FAILED = "login.failed"
LOGOUT = "logout"

# The researcher's view leaves out logins unless asked: they are for security, not for review.
REVIEW_ACTIONS = (
    RATING_CREATE,
    RATING_EDIT,
    DECISION_ADJUDICATE,
    DECISION_DISQUALIFY,
    SUBMISSION_ASSIGN,
    QUALIFY_GRANT,
    QUALIFY_PAY,
    QUALIFY_REVOKE,
    REVIEWER_ADD,
    REVIEWER_PASSWORD,
    REVIEWER_DISABLE,
)


def record(
    connection: Connection,
    actor: str,
    action: str,
    submission_id: str | None = None,
    **detail,
) -> None:
    connection.execute(
        review_audit.insert().values(
            # The database's clock on PostgreSQL: the login throttle (study.review.logins) counts
            # the failures every host records, whose own clocks may disagree.
            at=clock(connection),
            actor=actor,
            action=action,
            submission_id=submission_id,
            detail=json.dumps(detail, ensure_ascii=False, sort_keys=True),
        )
    )


def entries(
    connection: Connection,
    *,
    submission_id: str | None = None,
    actions: tuple[str, ...] | None = None,
    actor: str | None = None,
    since: float | None = None,
    limit: int | None = None,
) -> list[dict]:
    """Entries, newest first, each with its detail parsed."""
    query = select(review_audit).order_by(review_audit.c.id.desc())
    if submission_id is not None:
        query = query.where(review_audit.c.submission_id == submission_id)
    if actions is not None:
        query = query.where(review_audit.c.action.in_(actions))
    if actor is not None:
        query = query.where(review_audit.c.actor == actor)
    if since is not None:
        query = query.where(review_audit.c.at >= since)
    if limit is not None:
        query = query.limit(limit)
    return [
        {**row, "detail": json.loads(row["detail"] or "{}")}
        for row in connection.execute(query).mappings()
    ]
