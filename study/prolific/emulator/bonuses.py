"""Bonuses, in Prolific's two steps, with the trap left in place.

1. POST submissions/bonus-payments/ {study_id, csv_bonuses} sets up a bulk bonus payment: one
   "<participant or submission id>,<amount>" line per bonus, the amount in the study currency's
   major unit (docs: "1.50 for £1.50 ... An amount of 30 will pay £/$30.00"). Every id must have
   taken part in the study, else 400 naming the wrong ids. It answers the id and the cost in cents,
   the fee and VAT (and so the total) to a hundredth of a cent as Prolific's docs show them
   ("fees": 283.34); paying charges whole cents (fees.charged).
2. POST bulk-bonus-payments/<id>/pay/ pays it asynchronously ("in the following minutes").
   The docs warn the pay endpoint is NOT idempotent: "Sending multiple requests with the same bulk
   bonus payment ID will result in participants being paid multiple times." So here every pay
   call queues one more payment of the whole amount; the client must never send it twice.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from study.prolific.emulator import fees
from study.prolific.emulator.call import Call
from study.prolific.emulator.errors import ApiError, invalid, not_found
from study.prolific.emulator.state import State, iso, new_id

_AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")


def _lines(state: State, study_id: str, csv_bonuses: str) -> list[dict]:
    submissions = state.submissions_of(study_id)
    by_participant = {s["participant_id"]: s for s in submissions}
    by_id = {s["id"]: s for s in submissions}
    lines, wrong_ids, wrong_amounts = [], [], []
    for number, raw in enumerate(csv_bonuses.splitlines(), start=1):
        if not raw.strip():
            continue
        who, _, amount = (part.strip() for part in raw.partition(","))
        submission = by_participant.get(who) or by_id.get(who)
        if submission is None:
            wrong_ids.append(who or f"(line {number})")
            continue
        try:
            value = Decimal(amount) if _AMOUNT.match(amount) else None
        except InvalidOperation:
            value = None
        if value is None or value <= 0:
            wrong_amounts.append(f"line {number}: {amount!r}")
            continue
        lines.append({"submission_id": submission["id"],
                      "participant_id": submission["participant_id"],
                      "amount": int(value * 100)})
    if wrong_ids:
        raise ApiError(400, {"csv_bonuses": [
            "These ids did not take part in the study: " + ", ".join(wrong_ids) + "."]})
    if wrong_amounts:
        raise ApiError(400, {"csv_bonuses": [
            "Amounts must be positive decimals in the study currency (e.g. 1.50): "
            + "; ".join(wrong_amounts) + "."]})
    if not lines:
        raise invalid("csv_bonuses", "This field may not be blank.")
    return lines


def create(state: State, call: Call) -> tuple[int, dict]:
    study_id, csv_bonuses = call.body.get("study_id"), call.body.get("csv_bonuses")
    if not study_id:
        raise invalid("study_id", "This field is required.")
    if not isinstance(csv_bonuses, str) or not csv_bonuses.strip():
        raise invalid("csv_bonuses", "This field is required.")
    state.study(study_id)
    lines = _lines(state, study_id, csv_bonuses)
    rewards = sum(line["amount"] for line in lines)
    fee, vat = fees.quoted(rewards, state.data["fee_rate"], state.data["vat_rate"])
    bulk = {
        "id": new_id(),
        "study": study_id,
        "amount": rewards,
        # As Prolific answers them: numbers with hundredths of a cent (fees.quoted).
        "fees": float(fee),
        "vat": float(vat),
        "total_amount": float(rewards + fee + vat),
        "charged": fees.charged(rewards, fee, vat),  # whole cents, what paying takes
        "lines": lines,
        "created_at": state.now(),
        "payments": [],
    }
    state.data["bulk_bonuses"][bulk["id"]] = bulk
    return 201, _view(bulk)


def pay(state: State, call: Call, bulk_id: str) -> tuple[int, dict]:
    bulk = state.data["bulk_bonuses"].get(bulk_id)
    if bulk is None:
        raise not_found()
    state.require_funds(bulk["charged"], "this bonus payment")
    now = state.now()
    bulk["payments"].append(
        {"requested_at": now, "due_at": now + state.data["pay_delay"], "settled_at": None}
    )
    return 202, {}


def _view(bulk: dict) -> dict:
    return {key: bulk[key] for key in ("id", "study", "amount", "fees", "vat", "total_amount")}


def records(state: State) -> list[dict]:
    """The emulator's own ledger of bulk payments (GET /_emulator/bonus-payments)."""
    return [
        {
            **_view(bulk),
            "lines": bulk["lines"],
            "created_at": iso(bulk["created_at"]),
            "pay_calls": len(bulk["payments"]),
            "payments": [{"requested_at": iso(p["requested_at"]),
                          "settled_at": iso(p["settled_at"])} for p in bulk["payments"]],
        }
        for bulk in state.data["bulk_bonuses"].values()
    ]
