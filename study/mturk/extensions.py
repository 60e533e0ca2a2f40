"""Adding assignments to a HIT, exactly once however often the command runs or crashes.

The intent (table mturk_extensions: the HIT, its size before, how many to add) is written in
the same transaction that reserves the new slots under the budget cap, before MTurk is asked;
its UniqueRequestToken is the intent's own. A later run that finds the intent unfinished:
  - MTurk's HIT already has the target size: the earlier request went through; it is done;
  - otherwise it sends the same request with the same token, and MTurk's "token has already
    been processed" (within 24 hours) also means done.
A token built from MTurk's current size would not do: after a crash the size has already
grown, so the same command would make a new token and add the assignments again.
"""

from __future__ import annotations

import time
import uuid
from decimal import Decimal
from typing import Callable

from sqlalchemy import select, update

from study.mturk import hits as hit_module
from study.mturk import budget, ledger, money
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.store import reading, writing
from study.store.mturk import mturk_extensions


def add(
    ctx: Context,
    row: dict,
    hit: dict,
    more: int,
    *,
    confirm: Callable[[money.Cost], bool] | None = None,
) -> str:
    """Record the intent to add `more` assignments, reserve them, then ask MTurk."""
    check_size(hit, more)
    hit_id, before = hit["HITId"], hit["MaxAssignments"]
    total = before + more
    reward = Decimal(hit["Reward"])
    cost = money.Cost(reward * more, money.fee(reward, assignments=total) * more)
    with reading(ctx.engine) as connection:  # refused before anyone is asked to confirm
        budget.check_budget(
            connection, ctx.environment, ctx.budget, cost, f"{more} more assignments of {hit_id}"
        )
    if confirm is not None and not confirm(cost):
        return "no assignments added"
    intent = {
        "environment": ctx.environment,
        "request_token": f"extend-{uuid.uuid4().hex}",
        "hit_id": hit_id,
        "assignments_before": before,
        "assignments_added": more,
        "status": "intended",
        "created_at": time.time(),
    }
    with writing(ctx.engine) as connection:  # the slots and the intent, or nothing
        ledger.reserve_slots(
            connection,
            ctx.environment,
            hit_id=hit_id,
            hit_token=row["request_token"],
            reward=reward,
            max_assignments=total,
            count=more,
            budget=ctx.budget,
        )
        connection.execute(mturk_extensions.insert().values(**intent))
    return finish(ctx, hit, intent)


def check_size(hit: dict, more: int) -> None:
    """MTurk cannot grow a HIT of fewer than 10 assignments to 10 or more."""
    before = hit["MaxAssignments"]
    if before < 10 <= before + more:
        raise hit_module.HitError(
            f"HIT {hit['HITId']} has {before} assignments; MTurk cannot extend a HIT with fewer "
            "than 10 assignments to 10 or more. Fix: post a new HIT instead."
        )


def unfinished(ctx: Context, hit_id: str) -> dict | None:
    with reading(ctx.engine) as connection:
        found = (
            connection.execute(
                select(mturk_extensions)
                .where(
                    mturk_extensions.c.environment == ctx.environment,
                    mturk_extensions.c.hit_id == hit_id,
                    mturk_extensions.c.status == "intended",
                )
                .order_by(mturk_extensions.c.created_at)
            )
            .mappings()
            .first()
        )
    return dict(found) if found else None


def finish(ctx: Context, hit: dict, intent: dict) -> str:
    """Make sure MTurk has carried out the intent, once."""
    before, more = intent["assignments_before"], intent["assignments_added"]
    target = before + more
    done = f"{more} more assignments ({before} -> {target})"
    if hit["MaxAssignments"] >= target:  # the earlier request went through
        _settle(ctx, intent, "done")
        return done
    try:
        ctx.requester.call(
            "CreateAdditionalAssignmentsForHIT",
            HITId=hit["HITId"],
            NumberOfAdditionalAssignments=more,
            UniqueRequestToken=intent["request_token"],
        )
    except MTurkError as error:
        if not error.token_already_processed:
            if error.certain:  # refused: nothing was added, release what was reserved
                _settle(ctx, intent, "cancelled")
                hit_module.fit_reservations(
                    ctx, hit["HITId"], hit_module.current(ctx, hit["HITId"])
                )
                raise
            raise hit_module.HitError(
                f"{error}\nThe assignments may or may not have been added. Run the same "
                "extend again: it finishes this one without adding them twice."
            ) from None
    _settle(ctx, intent, "done")
    return done


def _settle(ctx: Context, intent: dict, status: str) -> None:
    with writing(ctx.engine) as connection:
        connection.execute(
            update(mturk_extensions)
            .where(
                mturk_extensions.c.environment == ctx.environment,
                mturk_extensions.c.request_token == intent["request_token"],
            )
            .values(status=status, settled_at=time.time())
        )
