"""A judge's tasks: claiming one, showing its items, storing ratings, submitting.

`claim` answers, in order: the assignment already holds a task (a reload: the same task);
otherwise the first free task, in the design's order, that shares no item with a task this
judge took before (so an item's k ratings come from k judges) and holds no text this judge wrote
(a lab study's writers may judge too: their worker id or access code is their judge key, so
nobody rates their own text), if the caller's `may_claim`
lets this judge take another (the task server's per-address throttle); None when none is left. A task
claimed but not submitted within `hold_seconds` is free again, so a judge who walked away does
not keep items from being rated. Judges are keyed by MTurk worker id or lab access code.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from sqlalchemy import Connection, func, or_, select, update

from study.store import sessions as session_store
from study.store.coordination import take_turn
from study.store.db import sessions
from study.store.judging import judging_items, judging_ratings, judging_task_items, judging_tasks

CANDIDATES = 200  # free tasks read per query while looking for one without a seen item


class TaskError(ValueError):
    """A request the task cannot take as sent (400)."""


class TaskNotReady(TaskError):
    """A request the task cannot take in its state: submitted, or not fully rated (409)."""


class TooManyClaims(Exception):
    """`may_claim` refused a new task: the judge's address has claimed too many (429)."""


def get(connection: Connection, task_id: str) -> dict | None:
    row = connection.execute(select(judging_tasks).where(judging_tasks.c.task_id == task_id)).mappings().first()
    return dict(row) if row else None


def by_assignment(connection: Connection, assignment_id: str) -> dict | None:
    row = connection.execute(
        select(judging_tasks).where(judging_tasks.c.assignment_id == assignment_id)
    ).mappings().first()
    return dict(row) if row else None


def _seen_items(connection: Connection, judge: str) -> set[str]:
    """The study items in this judge's tasks. Gold items do not count: they recur across tasks
    by design, and counting them would keep a judge from a second task."""
    mine = select(judging_tasks.c.task_id).where(judging_tasks.c.judge == judge)
    return set(connection.execute(
        select(judging_task_items.c.item_id)
        .join(judging_items, judging_items.c.item_id == judging_task_items.c.item_id)
        .where(judging_task_items.c.task_id.in_(mine), judging_items.c.gold_score.is_(None))
    ).scalars())  # fmt: skip


def _own_items(connection: Connection, judge: str) -> set[str]:
    """The items of texts this judge wrote: sessions whose worker id or access code is theirs."""
    theirs = select(sessions.c.session_id).where(or_(sessions.c.worker_id == judge, sessions.c.access_code == judge))
    return set(connection.execute(
        select(judging_items.c.item_id).where(judging_items.c.session_id.in_(theirs))
    ).scalars())  # fmt: skip


def claim(
    connection: Connection, *, judge: str, hold_seconds: float, assignment_id: str | None = None,
    hit_id: str | None = None, turk_submit_to: str | None = None, now: float | None = None,
    may_claim: Callable[[], bool] | None = None,
) -> dict | None:  # fmt: skip
    now = time.time() if now is None else now
    # Judges entering at once take turns: on PostgreSQL two would pick the same free task, and
    # the one whose claim came second would find it gone and be told nothing is left to rate.
    take_turn(connection, "judging:claim")
    if assignment_id:
        held = by_assignment(connection, assignment_id)
        if held is not None:
            if held["judge"] != judge:
                raise TaskError("this assignment belongs to another worker")
            return held
    else:  # a lab judge: their unsubmitted task first
        # Only a lab task: an MTurk judge's task is keyed by the worker id, which anyone may
        # type as an access code; it is theirs through its assignment alone.
        held = connection.execute(
            select(judging_tasks).where(judging_tasks.c.judge == judge, judging_tasks.c.submitted_at.is_(None),
                                        judging_tasks.c.assignment_id.is_(None))
            .order_by(judging_tasks.c.number)
        ).mappings().first()  # fmt: skip
        if held is not None:
            return dict(held)
    seen = _seen_items(connection, judge) | _own_items(connection, judge)
    free = or_(
        judging_tasks.c.claimed_at.is_(None),
        (judging_tasks.c.submitted_at.is_(None)) & (judging_tasks.c.claimed_at < now - hold_seconds),
    )
    after = -1
    while True:
        candidates = connection.execute(
            select(judging_tasks.c.task_id, judging_tasks.c.number)
            .where(free, judging_tasks.c.number > after, or_(judging_tasks.c.judge.is_(None), judging_tasks.c.judge != judge))
            .order_by(judging_tasks.c.number).limit(CANDIDATES)
        ).all()  # fmt: skip
        if not candidates:
            return None
        items: dict[str, set[str]] = {}
        for task_id, item_id in connection.execute(
            select(judging_task_items.c.task_id, judging_task_items.c.item_id)
            .where(judging_task_items.c.task_id.in_([c[0] for c in candidates]))
        ):  # fmt: skip
            items.setdefault(task_id, set()).add(item_id)
        for task_id, number in candidates:
            if items.get(task_id, set()) & seen:
                continue
            # Asked only now, so a reload or a full round uses up nothing: without it anyone
            # with the round's address could hold every task with made-up worker ids or access
            # codes, each for hold_seconds, and real judges would be told nothing is left.
            if may_claim is not None and not may_claim():
                raise TooManyClaims
            # A reclaimed task starts afresh: the walked-away judge's partial ratings go, and it
            # gets a new address, so the page they may still have open can no longer rate or
            # submit it in the next judge's name (its posts find no task).
            connection.execute(judging_ratings.delete().where(judging_ratings.c.task_id == task_id))
            fresh = secrets.token_hex(16)
            connection.execute(
                update(judging_task_items).where(judging_task_items.c.task_id == task_id).values(task_id=fresh)
            )  # fmt: skip
            connection.execute(
                update(judging_tasks).where(judging_tasks.c.task_id == task_id).values(
                    task_id=fresh, judge=judge, assignment_id=assignment_id or None, hit_id=hit_id,
                    turk_submit_to=turk_submit_to, claimed_at=now, submitted_at=None,
                    verification_code=None,
                )
            )  # fmt: skip
            return get(connection, fresh)
        after = candidates[-1][1]


def unsubmitted(connection: Connection) -> tuple[int, int]:
    """(tasks of the round, those not yet submitted: free, or held by a judge); (0, 0) before
    `study judging build`."""
    made, waiting = connection.execute(
        select(func.count(), func.count().filter(judging_tasks.c.submitted_at.is_(None))).select_from(judging_tasks)
    ).one()
    return made, waiting


def items_of(connection: Connection, task_id: str) -> list[dict]:
    """The task's items as its judge sees them (id and text only) with their rating so far."""
    rated = dict(connection.execute(
        select(judging_ratings.c.item_id, judging_ratings.c.score).where(judging_ratings.c.task_id == task_id)
    ).all())  # fmt: skip
    rows = connection.execute(
        select(judging_items.c.item_id, judging_items.c.text)
        .join(judging_task_items, judging_task_items.c.item_id == judging_items.c.item_id)
        .where(judging_task_items.c.task_id == task_id).order_by(judging_task_items.c.position)
    ).all()  # fmt: skip
    return [{"item": item_id, "text": text, "score": rated.get(item_id)} for item_id, text in rows]


def rate(connection: Connection, task: dict, ratings: list[dict], scores: tuple[int, ...]) -> int:
    """Store (or change) ratings of the task's items; returns how many items are rated."""
    if task["submitted_at"] is not None:
        raise TaskNotReady("this task was already submitted; its ratings can no longer change")
    mine = set(connection.execute(
        select(judging_task_items.c.item_id).where(judging_task_items.c.task_id == task["task_id"])
    ).scalars())  # fmt: skip
    for index, rating in enumerate(ratings):
        if rating["item"] not in mine:
            raise TaskError(f"ratings[{index}].item: {rating['item']!r} is not an item of this task")
        if rating["score"] not in scores:
            raise TaskError(f"ratings[{index}].score: must be one of {sorted(scores)}, got {rating['score']}")
    now = time.time()
    # A task's choices take turns: on PostgreSQL a choice changed before the first was stored
    # would find no rating to update in either request, and the second insert would fail.
    take_turn(connection, f"judging:task:{task['task_id']}")
    for rating in ratings:
        where = (judging_ratings.c.task_id == task["task_id"]) & (judging_ratings.c.item_id == rating["item"])
        if connection.execute(update(judging_ratings).where(where).values(score=rating["score"], rated_at=now)).rowcount == 0:
            connection.execute(judging_ratings.insert().values(
                task_id=task["task_id"], item_id=rating["item"], score=rating["score"], rated_at=now))
    return len(connection.execute(
        select(judging_ratings.c.item_id).where(judging_ratings.c.task_id == task["task_id"])
    ).all())


def submit(connection: Connection, task: dict) -> dict:
    """Finish the task once every item is rated; its verification code goes to MTurk."""
    if task["submitted_at"] is not None:
        return task
    total = len(items_of(connection, task["task_id"]))
    rated = connection.execute(
        select(judging_ratings.c.item_id).where(judging_ratings.c.task_id == task["task_id"])
    ).all()  # fmt: skip
    if len(rated) < total:
        raise TaskNotReady(f"{total - len(rated)} of {total} texts are not rated yet; rate every text first")
    connection.execute(
        update(judging_tasks).where(judging_tasks.c.task_id == task["task_id"])
        .values(submitted_at=time.time(), verification_code=session_store.new_verification_code())
    )  # fmt: skip
    return get(connection, task["task_id"])
