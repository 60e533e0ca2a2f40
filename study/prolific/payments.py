"""Bonuses on Prolific, paid once however often the command runs, crashes or loses an answer.

Prolific pays a bonus in two calls: `POST submissions/bonus-payments/` sets up a bulk payment
(nothing is paid; it answers the fee), then `POST bulk-bonus-payments/<id>/pay/` pays it,
asynchronously. The pay call is not idempotent and takes no request token: sent twice, it pays
twice. So, per bonus (one ledger entry):
  1. the entry is written ("intended") before anything is sent;
  2. the bulk payment is set up and its id and fee recorded; the cap is checked with that fee;
  3. `pay_sent_at` is written and committed, and only then is the pay call sent, by the one
     run that wrote it (two runs of the same bonus at once: the other sends nothing);
  4. Prolific's 202 confirms the entry.
A re-run finds the entry. Paid already: nothing is sent. `pay_sent_at` set but no answer heard
(the process was killed, the connection dropped): the pay call is NEVER sent again for that
bulk payment; Prolific's own record (the submission's `bonus_payments`) decides: a payment
more than the ledger has confirmed means this one went through ("found paid"); otherwise it is
"pending" (Prolific settles bonuses within minutes: run again later). Only a researcher who
has checked on Prolific's website that it was never paid may `abandon` it, which cancels the
entry and pays through a new bulk payment.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from study.prolific import ledger, money, submissions
from study.prolific.client import ProlificError
from study.prolific.context import Context
from study.store import writing


class BonusError(RuntimeError):
    pass


@dataclass
class BonusOutcome:
    status: str  # paid | already paid | found paid | pending | declined
    entry: dict
    cost: money.Cost
    submission_status: str = ""  # on Prolific: APPROVED, REJECTED, ...


def pay(
    ctx: Context,
    submission_id: str,
    amount: int,
    reason: str,
    *,
    repeat: bool = False,
    abandon: bool = False,
    confirm: Callable[[money.Cost, str], bool] | None = None,
) -> BonusOutcome:
    """Pay `amount` (minor units) to the participant of `submission_id`. `confirm` is asked
    with the cost and the submission's status on Prolific, which pays bonuses whatever it is:
    a rejected submission's participant may be paid for partial work."""
    if not reason.strip():
        raise BonusError("--reason is empty: the ledger keys a bonus by its reason. Fix: say why.")
    if amount < 1:
        raise BonusError("--amount must be at least 0.01.")
    submission, record = submissions.fetch(ctx, submission_id)
    participant, status = submission["participant_id"], submission["status"]
    try:
        with writing(ctx.engine) as connection:
            entry, created = ledger.intend_bonus(
                connection, ctx.environment, study_id=record["study_id"], submission_id=submission_id,
                participant_id=participant, amount=amount, reason=reason, repeat=repeat,
                currency=ctx.currency,
            )  # fmt: skip
    except ledger.SameReason as error:
        raise BonusError(str(error)) from None
    cost = money.Cost(amount, entry["fee"], entry["currency"])
    if entry["status"] == "confirmed":
        return BonusOutcome("already paid", entry, cost, status)
    if entry["pay_sent_at"] is not None:
        if paid_on_prolific(ctx, submission_id, amount):
            _settle(ctx, entry, "confirmed", "found in Prolific's bonus payments by a later run")
            return BonusOutcome("found paid", entry, cost, status)
        if not abandon:
            return BonusOutcome("pending", entry, cost, status)
        _settle(ctx, entry, "cancelled",
                "abandoned: the researcher found on Prolific that it was never paid")  # fmt: skip
        return pay(ctx, submission_id, amount, reason, repeat=True, confirm=confirm)
    if entry["bulk_payment_id"] is None:
        entry = set_up(ctx, entry, record["study_id"], participant)
    cost = money.Cost(amount, entry["fee"], entry["currency"])
    try:
        with writing(ctx.engine) as connection:
            ledger.check_budget(connection, ctx.environment, ctx.budget, cost,
                                f"a bonus of {money.show(amount, ctx.currency)}",
                                counted=cost.total)  # fmt: skip
    except ledger.BudgetExceeded:
        _give_up(ctx, entry, "refused by the budget cap")  # nothing was sent
        raise
    if confirm is not None and not confirm(cost, status):
        _give_up(ctx, entry, "declined before sending")
        return BonusOutcome("declined", entry, cost, status)
    with writing(ctx.engine) as connection:  # durable before the call that cannot be repeated
        # Only the run that marks the entry sends its pay call: another run of the same bonus
        # at the same moment (a second terminal) finds it marked and sends nothing.
        claimed = ledger.claim_pay(connection, entry["id"], entry["bulk_payment_id"], time.time())
    if not claimed:
        return BonusOutcome("pending", entry, cost, status)
    try:
        ctx.client.post(f"bulk-bonus-payments/{entry['bulk_payment_id']}/pay/")
    except ProlificError as error:
        if error.certain:
            _settle(ctx, entry, "cancelled", f"refused by Prolific: {error.message}")
            raise BonusError(f"Prolific refused the bonus: {error.message}") from None
        raise BonusError(
            f"{error.message}\nThe bonus may or may not have been paid. Run the same command "
            "again: it checks Prolific's records and never sends this payment's pay call twice."
        ) from None
    _settle(ctx, entry, "confirmed", "accepted by Prolific (bonuses settle within minutes)")
    return BonusOutcome("paid", entry, cost, status)


def set_up(ctx: Context, entry: dict, study_id: str, participant: str) -> dict:
    """Prolific's bulk payment for this one bonus, recorded with its fee. Setting up pays
    nothing, so a set-up whose answer was lost is simply made again."""
    try:
        answer = ctx.client.post(
            "submissions/bonus-payments/",
            {"study_id": study_id, "csv_bonuses": f"{participant},{money.major(entry['amount'])}\n"},
        )
    except ProlificError as error:
        _give_up(ctx, entry, f"set-up refused: {error.message}")
        raise BonusError(f"Prolific did not set up the bonus: {error.message}") from None
    fee = money.charged_fee(answer, what=f"bonus payment {answer.get('id')}")
    with writing(ctx.engine) as connection:
        # Another run of the same bonus may have set up and recorded its own meanwhile: the
        # first recorded is the one paid, and this one is left unpaid (setting up pays nothing).
        ledger.record_set_up(connection, entry["id"], answer["id"], fee)
        return ledger.entry(connection, entry["id"])


def paid_on_prolific(ctx: Context, submission_id: str, amount: int) -> bool:
    """True if Prolific's submission shows more bonuses of `amount` than the ledger has
    confirmed for it: the unconfirmed one went through."""
    shown = ctx.client.get(f"submissions/{submission_id}/").get("bonus_payments") or []
    on_prolific = sum(int(paid) == amount for paid in shown)
    with writing(ctx.engine) as connection:
        same = ledger.same_bonus(connection, ctx.environment, submission_id, amount, None)
    return on_prolific > sum(e["status"] == "confirmed" for e in same)


def _give_up(ctx: Context, entry: dict, note: str) -> None:
    """Cancel the entry, unless another run of the same bonus has sent its pay call meanwhile."""
    with writing(ctx.engine) as connection:
        ledger.cancel_unsent(connection, entry["id"], note)


def _settle(ctx: Context, entry: dict, status: str, note: str) -> None:
    with writing(ctx.engine) as connection:
        ledger.settle(connection, entry["id"], status, note)
