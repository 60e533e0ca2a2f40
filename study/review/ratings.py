"""Ratings: one per reviewer and submission, changeable, every change in the audit log.

Blindness: a reviewer sees other reviewers' ratings of a submission only once they have rated it
themselves (`visible_to`), so the first judgement is their own. A change made after seeing the
others is allowed (a reviewer may notice what they missed) but the audit entry says it was made
after seeing them.

Two pages on one rating (a reviewer with the submission open in two tabs) must not overwrite
each other unnoticed: every stored rating has a `version`, the page sends the version it showed
(0: none yet), and `rate` refuses a change made over another version with `StaleRating`, which
says what is stored now. Saving what is already stored is no conflict.
"""

from __future__ import annotations

import time

from sqlalchemy import Connection, select, update

from study.review import audit
from study.store.coordination import take_turn
from study.store.review_tables import review_ratings, reviewers

MAX_COMMENT = 5000


class RatingError(ValueError):
    pass


class StaleRating(RatingError):
    """A change sent from a page that showed an older version of the rating than is stored."""

    def __init__(self, message: str, current: dict | None = None) -> None:
        super().__init__(message)  # the message alone in args, so that it pickles whole
        self.current = current  # the rating as stored now (None: the page saw one, now gone)


def stale_message(current: dict | None) -> str:
    """What changed since the page was opened, and how to get it, in the reviewer's words."""
    if current is None:
        return (
            "Not saved: the rating this page showed is no longer stored. Reload the page to "
            "see the submission as it is now."
        )
    comment = f'the comment "{_preview(current["comment"])}"' if current["comment"] else "no comment"
    return (
        "Not saved: this rating was changed in another tab or window after this page was "
        f"opened; it is now {current['score']} with {comment}. This page's comment is kept in "
        "its box: reload the page to see the stored rating, or rate again here to replace it "
        "with this page's."
    )


def _preview(comment: str, length: int = 80) -> str:
    return comment if len(comment) <= length else comment[: length - 1] + "…"


def _box_line_breaks(comment: str) -> str:
    """The comment with the line breaks a comment box holds (LF): a browser sends CRLF."""
    return comment.replace("\r\n", "\n").replace("\r", "\n")


def _stored(row) -> dict:
    """A stored rating as every reader is given it. A rating saved before comments were stored
    with LF line breaks holds the CRLF its browser sent: read as the box holds it, it compares
    equal to the page's comment, so saving it again is no change. The audit log keeps what was
    stored then."""
    return {**row, "comment": _box_line_breaks(row["comment"])}


def own(connection: Connection, submission_id: str, reviewer_id: int) -> dict | None:
    row = (
        connection.execute(
            select(review_ratings).where(
                review_ratings.c.submission_id == submission_id,
                review_ratings.c.reviewer_id == reviewer_id,
            )
        )
        .mappings()
        .first()
    )
    return _stored(row) if row else None


def rate(
    connection: Connection,
    submission_id: str,
    reviewer: dict,
    score: int,
    comment: str,
    *,
    scores: tuple[int, ...],
    seen: int | None = None,
) -> dict:
    """Store the reviewer's rating (new or changed) and log it; returns the stored rating.

    `seen`: the version of this rating the reviewer's page showed (0: none); a change over any
    other version raises StaleRating. None (a script, the command line) does not check."""
    if score not in scores:
        raise RatingError(
            f"score must be one of {', '.join(map(str, sorted(scores)))}, got {score}"
        )
    # Stored as the box holds it, the comment a page is given back compares equal to what it shows.
    comment = _box_line_breaks(comment).strip()
    if len(comment) > MAX_COMMENT:
        raise RatingError(f"Please keep the comment under {MAX_COMMENT} characters.")
    now = time.time()
    # A reviewer's ratings of one submission take turns: on PostgreSQL a key pressed twice (or
    # the form and a key) would both find no rating, and the second insert would fail.
    take_turn(connection, f"review:rating:{submission_id}:{reviewer['reviewer_id']}")
    before = own(connection, submission_id, reviewer["reviewer_id"])
    stored = before["version"] if before else 0
    unchanged = before is not None and (before["score"], before["comment"]) == (score, comment)
    if seen is not None and seen != stored and not unchanged:
        raise StaleRating(stale_message(before), before)
    if before is None:
        connection.execute(
            review_ratings.insert().values(
                submission_id=submission_id,
                reviewer_id=reviewer["reviewer_id"],
                score=score,
                comment=comment,
                rated_at=now,
                updated_at=now,
                version=1,
            )
        )
        audit.record(
            connection,
            reviewer["name"],
            audit.RATING_CREATE,
            submission_id,
            score=score,
            comment=comment,
        )
    elif not unchanged:
        connection.execute(
            update(review_ratings)
            .where(
                review_ratings.c.submission_id == submission_id,
                review_ratings.c.reviewer_id == reviewer["reviewer_id"],
            )
            .values(score=score, comment=comment, updated_at=now, version=stored + 1)
        )
        audit.record(
            connection,
            reviewer["name"],
            audit.RATING_EDIT,
            submission_id,
            score=score,
            comment=comment,
            previous_score=before["score"],
            previous_comment=before["comment"],
            # Others' ratings were visible from the first rating on (see the module docstring).
            after_seeing_others=bool(others(connection, submission_id, reviewer["reviewer_id"])),
        )
    return own(connection, submission_id, reviewer["reviewer_id"])


def of_submission(connection: Connection, submission_id: str) -> list[dict]:
    """Every rating of a submission with its reviewer's name, oldest first."""
    rows = connection.execute(
        select(review_ratings, reviewers.c.name.label("reviewer"))
        .join(reviewers, reviewers.c.reviewer_id == review_ratings.c.reviewer_id)
        .where(review_ratings.c.submission_id == submission_id)
        .order_by(review_ratings.c.rated_at)
    ).mappings()
    return [_stored(row) for row in rows]


def others(connection: Connection, submission_id: str, reviewer_id: int) -> list[dict]:
    return [r for r in of_submission(connection, submission_id) if r["reviewer_id"] != reviewer_id]


def visible_to(connection: Connection, submission_id: str, reviewer_id: int) -> list[dict]:
    """Other reviewers' ratings of the submission if this reviewer has rated it, else []."""
    if own(connection, submission_id, reviewer_id) is None:
        return []
    return others(connection, submission_id, reviewer_id)


def all_ratings(connection: Connection) -> list[dict]:
    rows = connection.execute(
        select(review_ratings, reviewers.c.name.label("reviewer"))
        .join(reviewers, reviewers.c.reviewer_id == review_ratings.c.reviewer_id)
        .order_by(review_ratings.c.submission_id, review_ratings.c.rated_at)
    ).mappings()
    return [_stored(row) for row in rows]


def changed_after_seeing_others(connection: Connection, submission_ids: set[str]) -> set[tuple[str, str]]:
    """(submission, reviewer name) of the ratings of these submissions whose score was changed
    after their reviewer could see another's rating: agreement computed over the stored scores
    includes such second looks, which blind first ratings would not."""
    return {
        (entry["submission_id"], entry["actor"])
        for entry in audit.entries(connection, actions=(audit.RATING_EDIT,))
        if entry["submission_id"] in submission_ids
        and entry["detail"].get("after_seeing_others")
        and entry["detail"].get("score") != entry["detail"].get("previous_score")
    }
