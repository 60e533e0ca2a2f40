"""The budget cap: what the ledger's entries (study.mturk.ledger) add up to, and the check
before every spend.

Per environment (sandbox or live, and the account), fees included:
  reserved  intended entries: open slots, submissions not yet approved, bonuses being sent;
  charged   confirmed entries: what MTurk has paid;
  released  cancelled entries: reservations that will never be paid (back under the cap);
  committed = charged + reserved (+ unreserved: submissions `sync` found with no reservation,
  which MTurk may pay by auto-approval), and nothing is reserved past the cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import Connection, select

from study.mturk import money
from study.store.coordination import take_turn
from study.store.mturk import mturk_payments as payments


class BudgetExceeded(RuntimeError):
    pass


@dataclass(frozen=True)
class Budget:
    """The study's cap (None: no cap) in an environment; live mode refuses to spend without one.
    Functions take `budget=None` to record money MTurk already owes, which is never refused."""

    cap: Decimal | None
    live: bool


@dataclass(frozen=True)
class Totals:
    reserved: money.Cost  # intended
    charged: money.Cost  # confirmed
    unreserved: money.Cost  # seen on MTurk without a reservation
    released: money.Cost  # cancelled

    @property
    def committed(self) -> money.Cost:
        return self.charged + self.reserved + self.unreserved

    @property
    def paid(self) -> money.Cost:
        return self.charged


def totals(connection: Connection, environment: str) -> Totals:
    by_status = {"intended": money.ZERO, "confirmed": money.ZERO}
    by_status.update(unreserved=money.ZERO, cancelled=money.ZERO)
    rows = connection.execute(
        select(payments.c.amount, payments.c.fee, payments.c.status).where(
            payments.c.environment == environment
        )
    )
    for amount, fee, status in rows:
        by_status[status] += money.Cost(Decimal(amount), Decimal(fee))
    return Totals(
        by_status["intended"],
        by_status["confirmed"],
        by_status["unreserved"],
        by_status["cancelled"],
    )


def check_budget(
    connection: Connection,
    environment: str,
    budget: Budget | None,
    adding: money.Cost,
    what: str,
    *,
    counted: Decimal = Decimal("0"),
) -> None:
    """Refuse a spend that would take this environment's commitments past the cap. `counted`:
    how much of `adding` the commitments already include (an unreserved entry)."""
    if budget is None:
        return
    cap = budget.cap
    if cap is None:
        if budget.live:
            raise BudgetExceeded(
                f"Refusing {what}: live mode spends real money and this study has no budget cap. "
                'Fix: set the most this study may spend in dollars, fees included, e.g. budget = '
                '"100.00", in the [mturk] section of study.toml.'
            )
        return
    # Two commands at once (two terminals, a review and a bonus) must check one after the
    # other, or both see the same room under the cap and both spend it. SQLite's write lock
    # already orders them; PostgreSQL lets writers run side by side.
    take_turn(connection, f"budget:{environment}")
    committed = totals(connection, environment).committed.total - counted
    if committed + adding.total > cap:
        raise BudgetExceeded(
            f"Refusing {what}: it needs {adding.describe()}, {money.show(committed)} is already "
            f"committed in {environment}, and the budget cap is {money.show(cap)} "
            f"({money.show(max(cap - committed, Decimal('0')))} left). Fix: raise budget in "
            "[mturk] of study.toml, or spend less."
        )
