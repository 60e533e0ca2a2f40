"""What a requester does to a posted HIT: extend it (more assignments, a later expiry), expire
it, delete it. Each first asks MTurk for the HIT's state, because none of these calls is
idempotent on MTurk's side; what a HIT is and the table of this study's HITs are
study.mturk.hits, posting is study.mturk.posting.
"""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Callable

from study.mturk import assignments, budget, extensions, ledger, money
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.mturk.hits import (
    HitError,
    current,
    epoch,
    fit_reservations,
    row_by_hit,
    taken,
    unbound_slots,
    update_hit,
)
from study.store import reading, writing


def extend(
    ctx: Context,
    hit_id: str,
    *,
    more: int = 0,
    hours: float = 0,
    confirm: Callable[[money.Cost], bool] | None = None,
) -> list[str]:
    """Add assignments and/or push the expiry `hours` from now. Returns what was done.

    Adding assignments is recorded first as an intent (table mturk_extensions) together with
    the slots it reserves; its UniqueRequestToken comes from the intent, so running the same
    command again after a crash finishes that intent instead of adding the assignments twice.
    Re-opening a HIT reserves its takeable assignments again before MTurk is asked."""
    row = row_by_hit(ctx, hit_id)
    hit = _required(ctx, hit_id)
    interrupted = extensions.unfinished(ctx, hit_id)
    if more and not interrupted:
        extensions.check_size(hit, more)  # refused before anything is done
    # The expiry before the assignments: keeping a HIT open is the same request however often
    # it is made, adding assignments is not; if the cap (or a "no") stops the second half, the
    # same command run again must not add the assignments a second time.
    opened = None
    expire_at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=hours)
    if hours and epoch(hit["Expiration"]) >= expire_at.timestamp():
        # Extending never shortens: a HIT already open past that time keeps its expiry.
        until = dt.datetime.fromtimestamp(epoch(hit["Expiration"]), dt.timezone.utc)
        opened = f"already open until {until:%Y-%m-%d %H:%M} UTC, later than asked: unchanged"
    elif hours and _reserve_reopened(ctx, row, confirm):
        try:
            ctx.requester.call("UpdateExpirationForHIT", HITId=hit_id, ExpireAt=expire_at)
        except MTurkError as error:
            if error.certain and not error.token_already_processed:
                fit_reservations(ctx, hit_id, current(ctx, hit_id))  # refused: release again
            if not error.token_already_processed:
                raise
            # As in `expire`: the token is the HIT and the date, so the HIT may have been
            # re-opened to this same second before and closed since, and MTurk did nothing now.
            now_hit = current(ctx, hit_id)
            if now_hit is not None and epoch(now_hit["Expiration"]) < expire_at.timestamp() - 1:
                expire_at += dt.timedelta(seconds=1)
                ctx.requester.call("UpdateExpirationForHIT", HITId=hit_id, ExpireAt=expire_at)
        opened = f"open until {expire_at:%Y-%m-%d %H:%M} UTC"
    done = []
    if more and interrupted:
        done.append(
            extensions.finish(ctx, hit, interrupted)
            + " (an extend that did not finish before; nothing more was added: run it again "
            "to add more)"
        )
    elif more:
        done.append(extensions.add(ctx, row, hit, more, confirm=confirm))
    if opened:
        done.append(opened)
    current(ctx, hit_id)
    return done


def _reserve_reopened(
    ctx: Context, row: dict, confirm: Callable[[money.Cost], bool] | None
) -> bool:
    """Before a HIT is kept open longer (or re-opened after it expired and `sync` released its
    slots): reserve a slot for every assignment nobody submitted, within the cap. False if
    `confirm` declined the cost."""
    hit_id = row["hit_id"]
    hit = current(ctx, hit_id)
    takeable = hit["MaxAssignments"] - len(taken(ctx, hit_id))
    with reading(ctx.engine) as connection:
        reserved = len(unbound_slots(connection, ctx, hit_id))
    missing = max(takeable - reserved, 0)
    if not missing:
        return True
    reward = Decimal(hit["Reward"])
    fee = money.fee(reward, assignments=hit["MaxAssignments"])
    cost = money.Cost(reward * missing, fee * missing)
    what = f"re-opening {missing} assignments of HIT {hit_id}"
    with reading(ctx.engine) as connection:  # refused before anyone is asked to confirm
        budget.check_budget(connection, ctx.environment, ctx.budget, cost, what)
    if confirm is not None and not confirm(cost):
        return False
    with writing(ctx.engine) as connection:  # the cap is checked before MTurk is asked
        ledger.reserve_slots(
            connection,
            ctx.environment,
            hit_id=hit_id,
            hit_token=row["request_token"],
            reward=reward,
            max_assignments=hit["MaxAssignments"],
            count=missing,
            budget=ctx.budget,
        )
    return True


def _record(ctx: Context, hit: dict) -> None:
    """The HIT's assignments into the ledger, then its unusable slots released (as `sync`)."""
    assignments.record_hit(ctx, hit)


def expire(ctx: Context, hit_id: str) -> str:
    """Stop new workers from accepting. Checks the HIT first: UpdateExpirationForHIT is not
    idempotent (the same expiry twice within 24 hours fails)."""
    row = row_by_hit(ctx, hit_id)
    hit = current(ctx, hit_id) if row["status"] != "Disposed" else None
    if hit is None or hit["HITStatus"] == "Disposed":  # gone, or MTurk still shows it deleted
        fit_reservations(ctx, hit_id, None)
        return "already deleted"
    if epoch(hit["Expiration"]) <= time.time():
        _record(ctx, hit)
        return "already expired"
    expire_at = dt.datetime.now(dt.timezone.utc)
    try:
        ctx.requester.call("UpdateExpirationForHIT", HITId=hit_id, ExpireAt=expire_at)
    except MTurkError as error:
        if not error.token_already_processed:
            raise
        # The token is the HIT and the date: either this very request went through before (a
        # retry), or the HIT was expired at this same second and re-opened since, and MTurk did
        # nothing now. Only the HIT's expiry tells which; the second needs another date.
        hit = current(ctx, hit_id)
        if hit is not None and epoch(hit["Expiration"]) > expire_at.timestamp():
            ctx.requester.call(
                "UpdateExpirationForHIT",
                HITId=hit_id,
                ExpireAt=expire_at - dt.timedelta(seconds=1),
            )
    _record(ctx, current(ctx, hit_id))
    return "expired"


def delete(ctx: Context, hit_id: str) -> str:
    """DeleteHIT works only on a Reviewable HIT with no Submitted assignments: say which step
    is missing instead of letting MTurk refuse. The HIT's unused slots are released."""
    row = row_by_hit(ctx, hit_id)
    hit = current(ctx, hit_id) if row["status"] != "Disposed" else None
    if hit is None or hit["HITStatus"] == "Disposed":  # gone, or MTurk still shows it deleted
        fit_reservations(ctx, hit_id, None)
        return "already deleted"
    status = hit["HITStatus"]
    if status in ("Assignable", "Unassignable"):
        waiting = (
            f"; {hit['NumberOfAssignmentsPending']} workers are still working"
            if status == "Unassignable"
            else ""
        )
        raise HitError(
            f"HIT {hit_id} is {status}{waiting}. Fix: `study mturk expire` it first, then "
            "wait until nobody is working on it."
        )
    if status == "Reviewing":
        raise HitError(f"HIT {hit_id} is Reviewing; MTurk deletes only Reviewable HITs.")
    submitted = list(
        ctx.requester.pages(
            "ListAssignmentsForHIT", "Assignments", HITId=hit_id, AssignmentStatuses=["Submitted"]
        )
    )
    if submitted:
        raise HitError(
            f"HIT {hit_id} has {len(submitted)} submitted assignments nobody approved or "
            "rejected. Fix: `study mturk review` (or approve/reject) them first."
        )
    _record(ctx, hit)  # after DeleteHIT MTurk no longer lists the HIT's assignments
    ctx.requester.call("DeleteHIT", HITId=hit_id)
    update_hit(ctx, hit_id, status="Disposed")
    fit_reservations(ctx, hit_id, None)
    return "deleted"


def _required(ctx: Context, hit_id: str) -> dict:
    row_by_hit(ctx, hit_id)
    hit = current(ctx, hit_id)
    if hit is None:
        raise HitError(f"HIT {hit_id} was deleted.")
    return hit
