"""Bonuses, paid exactly once however often the command runs or crashes.

The ledger entry is written before SendBonus is called, and its UniqueRequestToken is derived
from the entry. Re-running the same bonus finds the entry and then:
  - confirmed: paid already, nothing is sent;
  - intended (an earlier run crashed or lost the answer): MTurk's bonus list for the assignment
    is checked first, so a payment made more than 24 hours ago (when MTurk has forgotten the
    token) is recognised; otherwise it is sent again with the same token, and MTurk's "token
    has already been processed" refusal means it was paid: the entry is confirmed.
The reason is compared with its spacing normalised ("Great story " is "Great story"), and a
bonus of another amount for a reason the assignment already has a bonus for is refused without
`--again`: a bonus scheme changed and run again would otherwise pay everyone twice.
`--again` (one more bonus for the same reason, on purpose) makes a new entry only when no entry
of that bonus is left "intended": an unfinished one is reconciled as above first, so re-running a
crashed `--again` pays the one bonus it meant, not two.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from study.mturk import assignments, ledger, money
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.store import writing


class BonusError(RuntimeError):
    pass


@dataclass
class BonusOutcome:
    status: str  # paid | already paid | found paid | declined
    entry: dict
    cost: money.Cost
    assignment_status: str = ""  # on MTurk: Submitted, Approved or Rejected


def pay(
    ctx: Context,
    assignment_id: str,
    amount: Decimal,
    reason: str,
    *,
    repeat: bool = False,
    confirm: Callable[[money.Cost, str], bool] | None = None,
) -> BonusOutcome:
    """Pay `amount` to the worker of `assignment_id`; `repeat` pays an identical bonus again.
    `confirm` is shown the cost and the assignment's status on MTurk: MTurk pays a bonus for a
    rejected assignment too (some researchers pay for partial work)."""
    reason = ledger.reason_text(reason)
    if not reason:
        raise BonusError("A bonus needs a reason: the worker sees it with the payment.")
    cost = money.bonus_cost(amount)
    assignment, hit = assignments.fetch(ctx, assignment_id)
    with writing(ctx.engine) as connection:
        entry, created = ledger.intend_bonus(
            connection,
            ctx.environment,
            assignment_id=assignment_id,
            worker_id=assignment["WorkerId"],
            hit_id=hit["HITId"],
            amount=amount,
            reason=reason,
            repeat=repeat,
            budget=ctx.budget,
        )
    if entry["status"] == "confirmed":
        return BonusOutcome("already paid", entry, cost)
    if not created and _paid_on_mturk(ctx, assignment_id, amount, reason):
        _settle(ctx, entry, "confirmed", "found in MTurk's bonus payments by a later run")
        return BonusOutcome("found paid", entry, cost)
    status = assignment["AssignmentStatus"]
    if confirm is not None and not confirm(cost, status):
        if created:
            _settle(ctx, entry, "cancelled", "declined before sending")
        return BonusOutcome("declined", entry, cost, status)
    try:
        ctx.requester.call(
            "SendBonus",
            WorkerId=assignment["WorkerId"],
            BonusAmount=money.usd(amount),
            AssignmentId=assignment_id,
            Reason=reason,
            UniqueRequestToken=entry["request_token"],
        )
    except MTurkError as error:
        if error.token_already_processed:
            _settle(ctx, entry, "confirmed", "MTurk had already processed this payment's token")
            return BonusOutcome("found paid", entry, cost)
        if error.certain:
            _settle(ctx, entry, "cancelled", f"refused by MTurk: {error.message}")
            raise BonusError(f"MTurk refused the bonus: {error}") from None
        raise BonusError(
            f"{error}\nThe bonus may or may not have been paid. Run the same command again: the "
            "ledger checks with MTurk before paying."
        ) from None
    with writing(ctx.engine) as connection:
        ledger.confirm(connection, entry["id"])
    return BonusOutcome("paid", entry, cost, status)


def _paid_on_mturk(ctx: Context, assignment_id: str, amount: Decimal, reason: str) -> bool:
    """True if MTurk lists more payments of this bonus than the ledger has confirmed."""
    on_mturk = sum(
        Decimal(b["BonusAmount"]) == amount and ledger.reason_text(b["Reason"]) == reason
        for b in ctx.requester.pages(
            "ListBonusPayments", "BonusPayments", AssignmentId=assignment_id
        )
    )
    with writing(ctx.engine) as connection:
        same = ledger.same_bonus(connection, ctx.environment, assignment_id, amount, reason)
    return on_mturk > sum(e["status"] == "confirmed" for e in same)


def _settle(ctx: Context, entry: dict, status: str, note: str) -> None:
    with writing(ctx.engine) as connection:
        ledger.settle(connection, entry["id"], status, note)
