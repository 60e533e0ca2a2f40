"""What the Prolific ledger (study.prolific.ledger) adds up: its totals, per currency, and the
refusal to mix currencies.

Every entry records the ISO code of the workspace currency it was written in (users/me at the
time). Totals are per currency, never summed across: pence and cents are both minor units. A
spend in one currency while money is committed in another (the study moved to a workspace
paying in another) is refused, as is one while money is committed by entries whose currency is
unknown (written before entries recorded it: the column was added as NULL, and today's
workspace says nothing about the one they were paid in). The cap is one amount in one
currency, and no exchange rate is one the researcher's budget agreed to.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select, update

from study.prolific import money
from study.store.prolific import prolific_payments as payments


class BudgetExceeded(RuntimeError):
    pass


class MixedCurrencies(BudgetExceeded):
    """A spend in one currency while the ledger has money committed in another, or in one it
    does not know."""


@dataclass(frozen=True)
class Totals:
    """`released`: place reservations that will not be paid (places nobody took, rejected,
    returned or timed-out submissions of a stopped study)."""

    reserved: money.Cost
    charged: money.Cost
    unreserved: money.Cost
    released: money.Cost

    @property
    def committed(self) -> money.Cost:
        return self.charged + self.reserved + self.unreserved


STATUSES = ("intended", "confirmed", "unreserved", "cancelled")


@dataclass(frozen=True)
class Group:
    """Reward places of one Prolific study that read alike in the ledger: same status, currency,
    reward, fee and note (a stopped study's hundred untaken places are one group)."""

    entries: tuple[dict, ...]

    @property
    def first(self) -> dict:
        return self.entries[0]

    @property
    def cost(self) -> money.Cost:
        return money.Cost(sum(e["amount"] for e in self.entries),
                          sum(e["fee"] for e in self.entries), self.first["currency"])  # fmt: skip


def grouped(entries: list[dict]) -> list[dict | Group]:
    """The ledger as `study prolific ledger` shows it by default: each study's reward places
    grouped by status (with their count and sum), and on lines of their own what differs from
    the study's other places: bonuses and unreserved submissions (places nobody reserved). A
    group of one is its entry, shown with its submission. Order: where each first appears."""
    slots: dict[tuple, list[dict]] = {}
    for index, entry in enumerate(entries):
        if entry["kind"] != "reward" or entry["status"] == "unreserved":
            slots[("own", index)] = [entry]
            continue
        alike = tuple(entry[field] for field in ("study_id", "status", "currency", "amount", "fee", "note"))
        slots.setdefault(("place", *alike), []).append(entry)
    return [Group(tuple(found)) if len(found) > 1 else found[0] for found in slots.values()]


def totals(connection: Connection, environment: str, currency: str | None) -> Totals:
    """The totals of the entries written in `currency` (None: those whose currency is unknown);
    entries in any other currency are not in them."""
    found = by_currency(connection, environment)
    if currency in found:
        return found[currency]
    zero = money.Cost(0, 0, currency)
    return Totals(zero, zero, zero, zero)


def by_currency(connection: Connection, environment: str) -> dict[str | None, Totals]:
    """The totals of each currency the ledger holds, in code order, unknown (None) last."""
    sums: dict[str | None, dict[str, money.Cost]] = {}
    rows = connection.execute(
        select(payments.c.currency, payments.c.amount, payments.c.fee, payments.c.status,
               payments.c.kind).where(payments.c.environment == environment)  # fmt: skip
    )
    for currency, amount, fee, status, kind in rows:
        of = sums.setdefault(currency, {s: money.Cost(0, 0, currency) for s in STATUSES})
        if status == "cancelled" and kind != "reward":
            # A cancelled bonus (refused by the cap or by Prolific, declined, abandoned) was
            # never one of the study's reservations: counted as released, a $500 typo the cap
            # refused showed as $666 released under an $80 cap. The ledger lists it, and why.
            continue
        of[status] += money.Cost(amount, fee, currency)
    return {
        currency: Totals(of["intended"], of["confirmed"], of["unreserved"], of["cancelled"])
        for currency, of in sorted(sums.items(), key=lambda item: (item[0] is None, item[0] or ""))
    }


def check_currency(connection: Connection, environment: str, currency: str | None, what: str) -> None:
    """Refuse a spend in `currency` while money (reserved, paid or unreserved) is committed in
    this environment in another currency or in an unknown one."""
    committed = {c: t.committed for c, t in by_currency(connection, environment).items()
                 if t.committed.total}  # fmt: skip
    if None in committed or currency is None:
        unknown = committed.get(None, money.Cost(0, 0, None))
        raise MixedCurrencies(
            f"Refusing {what}: {unknown.describe()} is committed in {environment} by ledger "
            "entries written before entries recorded their currency, and this tool does not "
            "guess it from today's workspace. Fix: look up on Prolific (the workspace's "
            "invoices) which currency those were paid in, then run "
            "`study prolific ledger DIR --earlier-currency CODE` (e.g. GBP) once."
        )
    others = {c: cost for c, cost in committed.items() if c != currency}
    if others:
        shown = " and ".join(cost.describe() for cost in others.values())
        raise MixedCurrencies(
            f"Refusing {what}: this Prolific workspace pays in {currency}, but {shown} is "
            f"already committed in {environment} in {', '.join(others)}. The budget cap is "
            "one amount in one currency, and pence cannot be added to cents. Fix: run this "
            f"study with the token of the {', '.join(others)} workspace it started in "
            f"(PROLIFIC_TOKEN), or start a new study directory for the {currency} workspace, "
            "with its own budget."
        )


def state_earlier_currency(connection: Connection, environment: str, currency: str) -> int:
    """Record the researcher's word for the currency of the entries written before entries
    recorded one (looked up on Prolific); returns how many. Entries that say theirs keep it."""
    # Only the currencies Prolific pays in: a typo ("GPB") would be stored for good (an entry
    # that says its currency keeps it), and every later spend refused as mixing currencies.
    if currency.upper() not in money.SYMBOLS:
        known = " or ".join(sorted(money.SYMBOLS))
        raise ValueError(f"--earlier-currency {currency!r} is not a currency Prolific pays in; nothing was "
                         f"recorded. Fix: give the one the workspace's invoices show, {known}.")
    stated = f"currency {currency.upper()} stated by the researcher"
    return connection.execute(
        update(payments)
        .where(payments.c.environment == environment, payments.c.currency.is_(None))
        .values(currency=currency.upper(),
                note=func.coalesce(payments.c.note + "; ", "") + stated)
    ).rowcount  # fmt: skip
