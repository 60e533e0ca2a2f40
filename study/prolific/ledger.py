"""The Prolific payments ledger (table prolific_payments) and the budget cap.

The same books as MTurk's (study.mturk.ledger), in Prolific's minor units: every payment is
written down before Prolific is asked to make it ("intended") and marked once it has been made
("confirmed") or never will be ("cancelled"). Two kinds:
  - reward: one entry per place of a published study, reserved before PUBLISH or before places
    are added (with Prolific's fee from its cost calculator), bound to a submission when `sync`
    sees one, confirmed on approval, and freed again on rejection, return or time-out (Prolific
    re-offers the place). A stopped study's untaken places are cancelled;
  - bonus: one entry per bonus, keyed by what is paid, carrying the bulk payment Prolific set
    up for it and when the pay call was sent (study.prolific.payments).
committed = charged + reserved (+ unreserved: seen on Prolific without a reservation), and
nothing is reserved past the cap; checks run in the transaction that writes the new entries,
before any money moves.

Every entry records the workspace currency it was written in; totals are per currency and a
spend never mixes two (study.prolific.totals).
"""

from __future__ import annotations

import hashlib
import time

from sqlalchemy import Connection, select, update

from study.mturk.ledger import SameReason, reason_text
from study.prolific import money
from study.prolific.context import Budget
# The books' sums live in study.prolific.totals; named here too, where callers look for them.
from study.prolific.totals import (  # noqa: F401
    BudgetExceeded,
    MixedCurrencies,
    Totals,
    by_currency,
    check_currency,
    state_earlier_currency,
    totals,
)
from study.store.coordination import take_turn
from study.store.prolific import prolific_payments as payments


def check_budget(
    connection: Connection,
    environment: str,
    budget: Budget | None,
    adding: money.Cost,
    what: str,
    *,
    counted: int = 0,
) -> None:
    """Refuse a spend that would take this environment's commitments past the cap, or add
    money in one currency to money committed in another (study.prolific.totals)."""
    currency = adding.currency
    if budget is None or budget.cap is None:
        if budget is not None and budget.live:
            raise BudgetExceeded(
                f"Refusing {what}: Prolific spends real money and this study has no budget cap. "
                "Fix: set the most this study may spend, fees included, in "
                f'{currency or "the workspace currency"}, e.g. budget = '
                f'"{money.as_written(8000, currency)}", in the [prolific] section of study.toml.'
            )
        check_currency(connection, environment, currency, what)
        return
    # Two commands at once (two terminals, a review and a bonus) must check one after the
    # other, or both see the same room under the cap and both spend it. SQLite's write lock
    # already orders them; PostgreSQL lets writers run side by side.
    take_turn(connection, f"budget:{environment}")
    check_currency(connection, environment, currency, what)
    committed = totals(connection, environment, currency).committed.total - counted
    if committed + adding.total > budget.cap:
        left = max(budget.cap - committed, 0)
        raise BudgetExceeded(
            f"Refusing {what}: it needs {adding.describe()}, {money.show(committed, currency)} is "
            f"already committed in {environment}, and the budget cap is "
            f"{money.show(budget.cap, currency)} ({money.show(left, currency)} left). Fix: raise "
            "budget in [prolific] of study.toml, or spend less."
        )


# -- reward places ----------------------------------------------------------------------------


def plan_places(
    connection: Connection,
    environment: str,
    *,
    study_id: str,
    reward: int,
    fee: int,
    count: int,
    currency: str,
    status: str = "intended",
) -> None:
    """`count` unbound reward entries for a study's places, each at what approving it is
    charged: `reward` and `fee`, Prolific's fee (and VAT) on one place (study.prolific.studies.
    quote), in the workspace's `currency`: line by line the ledger reads as Prolific's invoice."""
    first = len(places(connection, environment, study_id))
    now = time.time()
    for offset in range(count):
        connection.execute(
            payments.insert().values(
                environment=environment,
                entry_key=f"reward:{study_id}:{first + offset}",
                kind="reward",
                study_id=study_id,
                amount=reward,
                fee=fee,
                currency=currency,
                status=status,
                created_at=now,
            )
        )


def places(connection: Connection, environment: str, study_id: str) -> list[dict]:
    rows = connection.execute(
        select(payments)
        .where(
            payments.c.environment == environment,
            payments.c.kind == "reward",
            payments.c.study_id == study_id,
        )
        .order_by(payments.c.id)
    ).mappings()
    return [dict(row) for row in rows]


def open_places(connection: Connection, environment: str, study_id: str) -> list[dict]:
    return [
        p
        for p in places(connection, environment, study_id)
        if p["submission_id"] is None and p["status"] == "intended"
    ]


def reward_entry(connection: Connection, environment: str, submission_id: str) -> dict | None:
    row = (
        connection.execute(
            select(payments).where(
                payments.c.environment == environment,
                payments.c.kind == "reward",
                payments.c.submission_id == submission_id,
            )
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def bind_reward(
    connection: Connection,
    environment: str,
    *,
    study_id: str,
    submission_id: str,
    participant_id: str,
    reward: int,
    fee: int,
    currency: str,
) -> dict:
    """The reward entry of a submission: its own, else an open place of its study (in the
    currency it was reserved in), else a new "unreserved" one in the workspace's `currency`
    (places added on Prolific's website), which approving reserves first."""
    # Two commands binding submissions of one study at once (`sync` in one shell, `approve` in
    # another) must look for an open place one after the other: on PostgreSQL both would read
    # the same place as open, and the second's update would take it from the first submission,
    # leaving it no reward entry. SQLite's write lock already orders them.
    take_turn(connection, f"reward:{environment}:{study_id}")
    own = reward_entry(connection, environment, submission_id)
    if own:
        return own
    free = next(iter(open_places(connection, environment, study_id)), None)
    if free is None:
        connection.execute(
            payments.insert().values(
                environment=environment,
                # Not the study's id too: 67 characters, cut to 64, left two submissions that
                # Prolific made in the same second (ObjectIds differing in their last three
                # characters) one key, and the second could never be booked.
                entry_key=f"reward:submission:{submission_id}",
                kind="reward",
                study_id=study_id,
                amount=reward,
                fee=fee,
                currency=currency,
                status="unreserved",
                created_at=time.time(),
            )
        )
        free = places(connection, environment, study_id)[-1]
    # A re-offered place's note tells why its last submission left it ("re-offered: rejected");
    # kept on the new submission's entry it would read as this one's rejection, and an approval
    # would then show as a rejected submission paid.
    connection.execute(
        update(payments)
        .where(payments.c.id == free["id"])
        .values(submission_id=submission_id, participant_id=participant_id, note=None)
    )
    return {**free, "submission_id": submission_id, "participant_id": participant_id, "note": None}


def free_place(connection: Connection, entry: dict, note: str) -> None:
    """A rejected, returned or timed-out submission: Prolific re-offers its place, so the
    reservation stays and waits for the next participant."""
    # An unreserved entry was never under the cap: nothing to keep for the next participant.
    status = "cancelled" if entry["status"] == "unreserved" else "intended"
    if status == "intended":
        note = f"re-offered: {note}"
    connection.execute(
        update(payments)
        .where(payments.c.id == entry["id"])
        .values(submission_id=None, participant_id=None, status=status, note=note)
    )


def reserve(connection: Connection, environment: str, entry: dict, budget: Budget, what: str) -> None:
    """Bring an unreserved entry under the cap before paying it, or refuse."""
    if entry["status"] != "unreserved":
        return
    cost = money.Cost(entry["amount"], entry["fee"], entry["currency"])
    check_budget(connection, environment, budget, cost, what, counted=cost.total)
    settle(connection, entry["id"], "intended", "reserved under the cap before paying")


# -- bonuses ----------------------------------------------------------------------------------


def bonus_key(submission_id: str, amount: int, reason: str, occurrence: int) -> str:
    digest = hashlib.sha256(f"{submission_id}\n{amount}\n{reason}\n{occurrence}".encode())
    return f"bonus:{digest.hexdigest()[:40]}"


def same_bonus(
    connection: Connection, environment: str, submission_id: str, amount: int, reason: str | None
) -> list[dict]:
    query = select(payments).where(
        payments.c.environment == environment,
        payments.c.kind == "bonus",
        payments.c.submission_id == submission_id,
        payments.c.amount == amount,
    )
    rows = [dict(row) for row in connection.execute(query.order_by(payments.c.id)).mappings()]
    # Compared in Python, spacing normalised: entries written before reasons were normalised
    # keep theirs, and "thanks " typed again is the same bonus as "thanks".
    return rows if reason is None else [r for r in rows if reason_text(r["reason"] or "") == reason_text(reason)]


def _refuse_another_amount(connection: Connection, environment: str, submission_id: str, amount: int,
                           reason: str, currency: str) -> None:  # fmt: skip
    """A bonus scheme changed from 1.00 to 1.50 and run again over every submission would pay
    each participant twice for one reason: a second amount for the same reason is asked for."""
    rows = connection.execute(select(payments).where(
        payments.c.environment == environment, payments.c.kind == "bonus",
        payments.c.submission_id == submission_id, payments.c.amount != amount,
        payments.c.status.in_(("confirmed", "intended")),
    ).order_by(payments.c.id)).mappings()  # fmt: skip
    earlier = [r for r in rows if reason_text(r["reason"] or "") == reason]
    if earlier:
        e = earlier[-1]
        raise SameReason.worded(f"Submission {submission_id}", e, money.show(e["amount"], e["currency"] or currency),
                                reason, money.show(amount, currency), "study prolific ledger DIR --all")  # fmt: skip


def intend_bonus(
    connection: Connection,
    environment: str,
    *,
    study_id: str,
    submission_id: str,
    participant_id: str,
    amount: int,
    reason: str,
    repeat: bool,
    currency: str,
) -> tuple[dict, bool]:
    """The ledger entry for this bonus and whether it is new. An unfinished one (an earlier run
    crashed or lost Prolific's answer) comes first, even with `repeat`: it is reconciled with
    Prolific's records before anything new is intended."""
    # The same bonus asked for in two shells at once must take turns, or both read no entry and
    # both write one under the same key (PostgreSQL lets the second read before the first
    # commits): the second then finds the first's entry, whose pay call only one run sends.
    take_turn(connection, f"bonus:{environment}:{submission_id}")
    reason = reason_text(reason)  # as it is keyed, stored and sent
    existing = same_bonus(connection, environment, submission_id, amount, reason)
    unfinished = [e for e in existing if e["status"] == "intended"]
    if unfinished:
        return unfinished[0], False
    paid = [e for e in existing if e["status"] == "confirmed"]
    if paid and not repeat:
        return paid[-1], False
    if not repeat:
        _refuse_another_amount(connection, environment, submission_id, amount, reason, currency)
    connection.execute(
        payments.insert().values(
            environment=environment,
            entry_key=bonus_key(submission_id, amount, reason, len(existing)),
            kind="bonus",
            study_id=study_id,
            submission_id=submission_id,
            participant_id=participant_id,
            amount=amount,
            fee=0,  # Prolific says the fee when it sets the payment up
            currency=currency,
            reason=reason,
            status="intended",
            created_at=time.time(),
        )
    )
    return same_bonus(connection, environment, submission_id, amount, reason)[-1], True


def record_set_up(connection: Connection, entry_id: int, bulk_payment_id: str, fee: int) -> None:
    """The bulk payment set up for a bonus, unless one is recorded already."""
    connection.execute(
        update(payments)
        .where(payments.c.id == entry_id, payments.c.bulk_payment_id.is_(None))
        .values(bulk_payment_id=bulk_payment_id, fee=fee)
    )


def claim_pay(connection: Connection, entry_id: int, bulk_payment_id: str, now: float) -> bool:
    """Mark the bonus's pay call as being sent; False if some run marked it already (or the
    entry has moved on), and then the caller must not send it."""
    claimed = connection.execute(
        update(payments)
        .where(
            payments.c.id == entry_id,
            payments.c.status == "intended",
            payments.c.bulk_payment_id == bulk_payment_id,
            payments.c.pay_sent_at.is_(None),
        )
        .values(pay_sent_at=now)
    )
    return claimed.rowcount == 1


def cancel_unsent(connection: Connection, entry_id: int, note: str) -> None:
    """Cancel an intended bonus whose pay call no run has sent."""
    connection.execute(
        update(payments)
        .where(payments.c.id == entry_id, payments.c.status == "intended",
               payments.c.pay_sent_at.is_(None))
        .values(status="cancelled", settled_at=time.time(), note=note)
    )  # fmt: skip


def record(connection: Connection, entry_id: int, **values) -> None:
    connection.execute(update(payments).where(payments.c.id == entry_id).values(**values))


def entry(connection: Connection, entry_id: int) -> dict:
    return dict(connection.execute(select(payments).where(payments.c.id == entry_id)).mappings().one())


# -- settling ---------------------------------------------------------------------------------


def settle(connection: Connection, entry_id: int, status: str, note: str | None = None) -> None:
    assert status in ("confirmed", "cancelled", "intended")
    values = {"status": status, "settled_at": time.time() if status != "intended" else None}
    if note:
        values["note"] = note
    record(connection, entry_id, **values)


def entries(connection: Connection, environment: str, *, kind: str | None = None) -> list[dict]:
    query = select(payments).where(payments.c.environment == environment).order_by(payments.c.id)
    if kind:
        query = query.where(payments.c.kind == kind)
    return [dict(row) for row in connection.execute(query).mappings()]
