"""The payments ledger (table mturk_payments): every payment MTurk may make for this study.

Every payment is written down before MTurk is asked to make it ("intended") and marked once
MTurk has made it ("confirmed") or will not ("cancelled"). Two kinds:
  - reward: one entry per assignment a HIT may pay for, reserved when the HIT is posted,
    extended or re-opened (an unbound "slot"), bound to an assignment when a worker submits,
    confirmed on approval (including MTurk's auto-approval), cancelled on rejection or when the
    HIT closes or is deleted with the slot untaken;
  - bonus: one entry per bonus, keyed by what is paid, so a retried command finds its entry.

A submission `sync` finds with no reservation (a HIT extended on the requester website) is
recorded as "unreserved"; approving it first reserves it (`reserve`), which the cap can refuse.
Every new entry is checked against the budget cap (study.mturk.budget) inside the transaction
that writes it, before any money moves.
"""

from __future__ import annotations

import hashlib
import time
from decimal import Decimal

from sqlalchemy import Connection, func, select, update

from study.mturk import money
from study.mturk.budget import Budget, check_budget
from study.store.coordination import take_turn
from study.store.mturk import mturk_payments as payments


def reserve(
    connection: Connection, environment: str, entry: dict, budget: Budget, what: str
) -> None:
    """Bring an unreserved entry under the cap before paying it, or refuse."""
    if entry["status"] != "unreserved":
        return
    cost = money.Cost(Decimal(entry["amount"]), Decimal(entry["fee"]))
    check_budget(connection, environment, budget, cost, what, counted=cost.total)
    settle(connection, entry["id"], "intended", "reserved under the cap before paying")


# -- reward slots -----------------------------------------------------------------------------


def plan_rewards(
    connection: Connection,
    environment: str,
    *,
    hit_token: str,
    reward: Decimal,
    max_assignments: int,
    count: int,
    first: int = 0,
    hit_id: str | None = None,
    status: str = "intended",
) -> None:
    """`count` unbound reward slots for a HIT (before or after MTurk has created it)."""
    fee = money.fee(reward, assignments=max_assignments)
    now = time.time()
    for index in range(first, first + count):
        connection.execute(
            payments.insert().values(
                environment=environment,
                entry_key=_short_key(f"reward:{hit_token}:{index}"),
                kind="reward",
                hit_id=hit_id,
                amount=money.usd(reward),
                fee=money.usd(fee),
                status=status,
                # A reward slot carries the token of the request that posted its HIT.
                request_token=hit_token,
                created_at=now,
            )
        )


def _short_key(key: str) -> str:
    return key if len(key) <= 64 else "reward:" + hashlib.sha256(key.encode()).hexdigest()[:56]


def attach_hit(connection: Connection, environment: str, hit_token: str, hit_id: str) -> None:
    connection.execute(
        update(payments)
        .where(
            payments.c.environment == environment,
            payments.c.kind == "reward",
            payments.c.request_token == hit_token,
        )
        .values(hit_id=hit_id)
    )


def slots(connection: Connection, environment: str, hit_id: str) -> list[dict]:
    rows = connection.execute(
        select(payments)
        .where(
            payments.c.environment == environment,
            payments.c.kind == "reward",
            payments.c.hit_id == hit_id,
        )
        .order_by(payments.c.id)
    ).mappings()
    return [dict(row) for row in rows]


def reserve_slots(
    connection: Connection,
    environment: str,
    *,
    hit_id: str,
    hit_token: str,
    reward: Decimal,
    max_assignments: int,
    count: int,
    budget: Budget,
) -> None:
    """`count` more reward slots for a HIT being extended or re-opened, within the cap.
    (Releasing slots a HIT can no longer use is study.mturk.hits.fit_reservations.)"""
    fee = money.fee(reward, assignments=max_assignments)
    cost = money.Cost(reward * count, fee * count)
    check_budget(connection, environment, budget, cost, f"{count} more assignments of HIT {hit_id}")
    plan_rewards(
        connection,
        environment,
        hit_token=hit_token,
        reward=reward,
        max_assignments=max_assignments,
        count=count,
        first=len(slots(connection, environment, hit_id)),
        hit_id=hit_id,
    )


def bind_reward(
    connection: Connection,
    environment: str,
    *,
    hit_id: str,
    assignment_id: str,
    worker_id: str,
    reward: Decimal,
    max_assignments: int,
    budget: Budget | None,
) -> dict:
    """The reward entry of an assignment: its own, else a free slot of its HIT, else a new one
    (a HIT extended outside this tool): checked against the budget, or without one (`sync`)
    recorded as "unreserved", which approving reserves first."""
    # Two commands binding assignments of one HIT at once (`sync` in one shell, `approve` in
    # another) must look for a free slot one after the other: on PostgreSQL both would read the
    # same slot as free, and the second's update would take it from the first assignment,
    # leaving it no reward entry. SQLite's write lock already orders them.
    take_turn(connection, f"reward:{environment}:{hit_id}")
    own = (
        connection.execute(
            select(payments).where(
                payments.c.environment == environment,
                payments.c.kind == "reward",
                payments.c.assignment_id == assignment_id,
            )
        )
        .mappings()
        .first()
    )
    if own:
        return dict(own)
    free = next(
        (
            r
            for r in slots(connection, environment, hit_id)
            if r["assignment_id"] is None and r["status"] == "intended"
        ),
        None,
    )
    if free is None:
        cost = money.Cost(reward, money.fee(reward, assignments=max_assignments))
        check_budget(
            connection, environment, budget, cost, f"the reward of assignment {assignment_id}"
        )
        plan_rewards(
            connection,
            environment,
            hit_token=f"assignment-{assignment_id}",
            reward=reward,
            max_assignments=max_assignments,
            count=1,
            hit_id=hit_id,
            status="intended" if budget is not None else "unreserved",
        )
        free = slots(connection, environment, hit_id)[-1]
    connection.execute(
        update(payments)
        .where(payments.c.id == free["id"])
        .values(assignment_id=assignment_id, worker_id=worker_id)
    )
    return {**free, "assignment_id": assignment_id, "worker_id": worker_id}


def reward_entry(connection: Connection, environment: str, assignment_id: str) -> dict | None:
    row = (
        connection.execute(
            select(payments).where(
                payments.c.environment == environment,
                payments.c.kind == "reward",
                payments.c.assignment_id == assignment_id,
            )
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


# -- bonuses ----------------------------------------------------------------------------------


def bonus_key(assignment_id: str, amount: Decimal, reason: str, occurrence: int) -> str:
    """The ledger key of a bonus: the same bonus asked for again maps to the same entry."""
    digest = hashlib.sha256(
        f"{assignment_id}\n{money.usd(amount)}\n{reason}\n{occurrence}".encode()
    ).hexdigest()
    return f"bonus:{digest[:40]}"


def request_token(entry_key: str) -> str:
    """The UniqueRequestToken sent with the payment (at most 64 characters)."""
    return "study-" + entry_key.replace(":", "-")[:58]


def reason_text(reason: str) -> str:
    """A bonus's reason as it is keyed, stored and sent: its words with single spaces, so the
    same command typed again with a stray space or a trailing newline is the same bonus."""
    return " ".join(reason.split())


class SameReason(ValueError):
    """A bonus of another amount for a reason the assignment is already paid (or being paid) for."""

    @classmethod
    def worded(cls, what: str, earlier: dict, earlier_amount: str, reason: str, amount: str,
               ledger_command: str) -> SameReason:  # fmt: skip
        """The refusal, for MTurk's assignments and Prolific's submissions alike: `what` names
        the assignment or submission, the amounts are shown in its money."""
        state = "paid" if earlier["status"] == "confirmed" else "sent by an earlier run, unfinished"
        return cls(
            f"{what} already has a bonus of {earlier_amount} for {reason_text(reason)!r} ({state}); "
            f"nothing was paid. Fix: to pay {amount} more for the same reason on purpose, add "
            f"--again; otherwise give the reason this bonus is for (`{ledger_command}` lists the "
            "bonuses paid)."
        )


def same_bonus(
    connection: Connection, environment: str, assignment_id: str, amount: Decimal, reason: str
) -> list[dict]:
    return [
        e
        for e in _bonuses_for_reason(connection, environment, assignment_id, reason)
        if e["amount"] == money.usd(amount)
    ]


def _bonuses_for_reason(
    connection: Connection, environment: str, assignment_id: str, reason: str
) -> list[dict]:
    # Compared in Python: entries written before reasons were normalised keep their spacing.
    rows = connection.execute(
        select(payments)
        .where(
            payments.c.environment == environment,
            payments.c.kind == "bonus",
            payments.c.assignment_id == assignment_id,
        )
        .order_by(payments.c.id)
    ).mappings()
    return [dict(row) for row in rows if reason_text(row["reason"] or "") == reason_text(reason)]


def _refuse_another_amount(
    connection: Connection, environment: str, assignment_id: str, amount: Decimal, reason: str
) -> None:
    """A bonus scheme changed from $1.00 to $1.50 and run again over every assignment would
    pay each worker twice for one reason: a second amount for the same reason is asked for."""
    earlier = [
        e
        for e in _bonuses_for_reason(connection, environment, assignment_id, reason)
        if e["status"] in ("confirmed", "intended") and e["amount"] != money.usd(amount)
    ]
    if earlier:
        e = earlier[-1]
        raise SameReason.worded(f"Assignment {assignment_id}", e, money.show(Decimal(e["amount"])), reason,
                                money.show(amount), "study mturk ledger DIR")  # fmt: skip


def intend_bonus(
    connection: Connection,
    environment: str,
    *,
    assignment_id: str,
    worker_id: str,
    hit_id: str,
    amount: Decimal,
    reason: str,
    repeat: bool,
    budget: Budget | None,
) -> tuple[dict, bool]:
    """The ledger entry for this bonus and whether it is new. Asking again for the same bonus
    returns the existing entry; `repeat` asks for one more identical bonus on purpose. An
    intent an earlier run left unfinished (it crashed, or lost MTurk's answer) is returned
    first, even with `repeat`: it must be reconciled with MTurk's bonus payments before any
    new intent, or a re-run of `--again` pays one more than was meant."""
    # The same bonus asked for in two shells at once must take turns, or both read no entry and
    # both write one under the same key (PostgreSQL lets the second read before the first
    # commits): the second then finds the first's entry, whose token MTurk pays once.
    take_turn(connection, f"bonus:{environment}:{assignment_id}")
    existing = same_bonus(connection, environment, assignment_id, amount, reason)
    unfinished = [e for e in existing if e["status"] == "intended"]
    if unfinished:
        return unfinished[0], False
    paid = [e for e in existing if e["status"] == "confirmed"]
    if paid and not repeat:
        return paid[-1], False
    if not repeat:
        _refuse_another_amount(connection, environment, assignment_id, amount, reason)
    occurrence = len(existing)
    key = bonus_key(assignment_id, amount, reason, occurrence)
    check_budget(
        connection,
        environment,
        budget,
        money.bonus_cost(amount),
        f"a bonus of {money.show(amount)}",
    )
    connection.execute(
        payments.insert().values(
            environment=environment,
            entry_key=key,
            kind="bonus",
            hit_id=hit_id,
            assignment_id=assignment_id,
            worker_id=worker_id,
            amount=money.usd(amount),
            fee=money.usd(money.fee(amount)),
            reason=reason,
            status="intended",
            request_token=request_token(key),
            created_at=time.time(),
        )
    )
    return same_bonus(connection, environment, assignment_id, amount, reason)[-1], True


# -- settling ---------------------------------------------------------------------------------


def settle(connection: Connection, entry_id: int, status: str, note: str | None = None) -> None:
    """Mark an entry confirmed (paid) or cancelled (will not be paid)."""
    assert status in ("confirmed", "cancelled", "intended")  # "unreserved" only when recorded
    values = {"status": status, "settled_at": time.time() if status != "intended" else None}
    if note:
        values["note"] = note
    connection.execute(update(payments).where(payments.c.id == entry_id).values(**values))


def confirm(connection: Connection, entry_id: int, note: str | None = None) -> None:
    settle(connection, entry_id, "confirmed", note)


def entries(connection: Connection, environment: str, *, kind: str | None = None) -> list[dict]:
    query = select(payments).where(payments.c.environment == environment).order_by(payments.c.id)
    if kind:
        query = query.where(payments.c.kind == kind)
    return [dict(row) for row in connection.execute(query).mappings()]


def count(connection: Connection, environment: str, **where) -> int:
    query = select(func.count()).select_from(payments).where(payments.c.environment == environment)
    for key, value in where.items():
        query = query.where(payments.c[key] == value)
    return connection.execute(query).scalar_one()
