"""Money on Prolific: integers in the currency's minor unit (pence or cents), as the API sends
them (`reward: 150` is 1.50). Never a float.

Prolific refuses to publish a study paying less than its minimum hourly rate for the study's
estimated completion time (£6.00 or $8.00 an hour); the fee is not hard-coded anywhere: it is
what Prolific's study cost calculator and bonus set-up answer (study.prolific.ledger).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

SYMBOLS = {"GBP": "£", "USD": "$"}
# The minor unit of each currency Prolific pays in, as a message names it.
MINOR_UNITS = {"GBP": "penny", "USD": "cent"}
# Minor units per hour of estimated completion time.
MINIMUM_HOURLY = {"GBP": 600, "USD": 800}

# An amount as a researcher writes one: digits and a decimal point. Decimal also reads "1e3"
# ($1,000 for a typo of "1.3"), "1_0" (10) and other scripts' digits, which would be paid.
PLAIN_AMOUNT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


class MoneyError(ValueError):
    pass


def written_currency(text: str | int) -> str | None:
    """The currency an amount's symbol names ("£2.50": GBP, "$2.50": USD); None without one."""
    raw = str(text).strip()
    return next((code for code, symbol in SYMBOLS.items() if raw.startswith(symbol)), None)


def parse(text: str | int, *, what: str = "amount", currency: str | None = None) -> int:
    """'2.50', '£2.5' or '3' -> 250 (minor units); refuses fractions of a cent (penny) and amounts < 0.01,
    and, given the workspace's `currency`, an amount whose symbol names another one: Prolific
    pays in the workspace's currency whatever the symbol says, so "$2.50" would be £2.50."""
    if isinstance(text, float):
        raise MoneyError(f'{what}: give money as text such as "2.50", not the float {text!r}')
    written = written_currency(text)
    if currency and written and written != currency:
        raise MoneyError(
            f"{what}: {text!r} is in {written}, but this Prolific workspace pays in {currency}. "
            f'Fix: give the amount in {currency}, e.g. "{as_written(250, currency)}"'
        )
    raw = str(text).strip().lstrip("£$").strip()
    try:
        if not isinstance(text, Decimal) and not PLAIN_AMOUNT.fullmatch(raw):
            raise InvalidOperation
        value = Decimal(raw)
    except InvalidOperation:
        raise MoneyError(f'{what}: {text!r} is not an amount of money; write it like "2.50"') from None
    if not value.is_finite() or value != value.quantize(Decimal("0.01")):
        raise MoneyError(f'{what}: {text!r} has fractions of a {minor_unit(currency)}; write it like "2.50"')
    if value < Decimal("0.01"):
        raise MoneyError(f'{what}: {text!r} must be at least 0.01')
    return int(value * 100)


def minor_unit(currency: str | None) -> str:
    """The minor unit a message names: cent for a dollar workspace, penny for a pound one,
    "cent or penny" when the currency is not known yet (study.toml is read before Prolific
    says the workspace's)."""
    return MINOR_UNITS.get(currency or "", "cent or penny")


def whole_minor(amount: int | str | Decimal, *, what: str = "amount") -> int:
    """An amount already in minor units (150 or "150" is 1.50): refuses floats and fractions of
    a penny instead of truncating them (int(Decimal("2.5")) is 2)."""
    if isinstance(amount, (float, bool)):
        raise MoneyError(f"{what}: give minor units as a whole number such as 150, not {amount!r}")
    try:
        value = Decimal(str(amount).strip())
    except InvalidOperation:
        raise MoneyError(f"{what}: {amount!r} is not a whole number of minor units, e.g. 150") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise MoneyError(f"{what}: {amount!r} is not a whole number of minor units (150 is 1.50)")
    return int(value)


def charged_fee(answer: dict, *, what: str) -> int:
    """Prolific's fee and VAT from an answer that states them in minor units to a hundredth
    ("fees": 283.34, "vat": 0: the docs' bonus set-up), as whole minor units: their sum rounded
    to the penny, half up, which is what the payment takes from the balance. int() would drop
    up to two pence per payment, so the ledger and the cap would count less than is paid."""
    try:
        parts = [Decimal(str(answer.get(field) or 0)) for field in ("fees", "vat")]
    except InvalidOperation:
        raise MoneyError(
            f"{what}: Prolific answered fees {answer.get('fees')!r} and VAT {answer.get('vat')!r}, "
            "which are not amounts in minor units; nothing was paid"
        ) from None
    return int(sum(parts).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def major(minor: int) -> str:
    """250 -> '2.50' (the unit of Prolific's bonus CSV)."""
    sign = "-" if minor < 0 else ""
    return f"{sign}{abs(minor) // 100}.{abs(minor) % 100:02d}"


def show(minor: int, currency: str | None = "GBP") -> str:
    """250 -> '£2.50'; a ledger entry written before entries recorded their currency (None)
    shows its amount with the currency said to be unknown, not in today's workspace's."""
    if currency is None:
        return f"{major(minor)} (currency unknown)"
    return f"{SYMBOLS.get(currency, currency + ' ')}{major(minor)}"


def as_written(minor: int, currency: str) -> str:
    """250 -> "£2.50" for a pound workspace: an amount as study.toml may give it for a workspace
    paying in `currency`, which `parse` accepts (a currency without a symbol here: "2.50", which
    is read in the workspace's currency; "EUR 2.50" would be refused)."""
    return f"{SYMBOLS.get(currency, '')}{major(minor)}"


def code(currency: str | None) -> str:
    """The ISO code as shown in a report, "unknown" for an entry that does not say."""
    return currency or "unknown"


def minimum_reward(minutes: int, currency: str) -> int:
    """The least reward Prolific accepts for `minutes` of estimated completion time."""
    hourly = MINIMUM_HOURLY.get(currency, MINIMUM_HOURLY["USD"])
    return -(-hourly * minutes // 60)  # rounded up


@dataclass(frozen=True)
class Cost:
    """What something takes from the workspace's balance: participants' pay and Prolific's fees
    (with VAT where due), as Prolific's calculator answers them."""

    pay: int
    fees: int
    currency: str | None = "GBP"  # None: a ledger entry's from before currencies were recorded

    @property
    def total(self) -> int:
        return self.pay + self.fees

    def times(self, count: int) -> "Cost":
        """`count` of this cost, e.g. the places of a study each charged this."""
        return Cost(self.pay * count, self.fees * count, self.currency)

    def __add__(self, other: "Cost") -> "Cost":
        # Pence plus cents is no amount at all: a sum over the ledger groups by currency first.
        if other.currency != self.currency:
            raise MoneyError(
                f"cannot add {other.describe()} to {self.describe()}: different currencies"
            )
        return Cost(self.pay + other.pay, self.fees + other.fees, self.currency)

    def describe(self) -> str:
        return (
            f"{show(self.total, self.currency)} ({show(self.pay, self.currency)} to participants "
            f"+ {show(self.fees, self.currency)} Prolific fees)"
        )


@dataclass(frozen=True)
class Costs:
    """Costs in more than one currency, each kept whole: what approving submissions whose
    places were reserved under different workspaces' currencies takes, shown side by side."""

    parts: tuple[Cost, ...]

    @classmethod
    def of(cls, costs: list[Cost], currency: str | None) -> "Costs":
        """`costs` summed per currency; nothing at all: zero in `currency`."""
        sums: dict[str | None, Cost] = {}
        for cost in costs:
            sums[cost.currency] = sums[cost.currency] + cost if cost.currency in sums else cost
        return cls(tuple(sums.values()) or (Cost(0, 0, currency),))

    def describe(self) -> str:
        return " and ".join(part.describe() for part in self.parts)
