"""Dollar amounts and MTurk's fees, in Decimal: money is never a float here.

MTurk's commission (https://requester.mturk.com/pricing):
  - 20% of each reward and each bonus;
  - 40% of the reward on HITs with 10 or more assignments (the extra 20% is charged per
    assignment of such a HIT; bonuses stay at 20%);
  - at least $0.01 per assignment or bonus.
The fee is rounded to the cent, half up (19.99 * 20% = 3.998 -> $4.00).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
MINIMUM_FEE = CENT
BASE_RATE = Decimal("0.20")
LARGE_HIT_RATE = Decimal("0.40")
LARGE_HIT_ASSIGNMENTS = 10

# An amount as a researcher writes one: digits and a decimal point. Decimal also reads "1e3"
# ($1,000 for a typo of "1.3"), "1_0" (10) and other scripts' digits, which would be paid.
PLAIN_AMOUNT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


class MoneyError(ValueError):
    pass


def parse_usd(text: str | Decimal | int, *, what: str = "amount") -> Decimal:
    """'2.50', '$2.5' or '3' -> Decimal('2.50'); refuses fractions of a cent and amounts < $0.01."""
    if isinstance(text, float):
        raise MoneyError(f'{what}: give dollars as text such as "2.50", not the float {text!r}')
    raw = str(text).strip().removeprefix("$").strip()
    try:
        if not isinstance(text, Decimal) and not PLAIN_AMOUNT.fullmatch(raw):
            raise InvalidOperation
        value = Decimal(raw)
    except InvalidOperation:
        raise MoneyError(f'{what}: {text!r} is not a dollar amount; write it like "2.50"') from None
    if not value.is_finite() or value != value.quantize(CENT):
        raise MoneyError(
            f'{what}: {text!r} has fractions of a cent; MTurk pays whole cents, e.g. "2.50"'
        )
    if value < CENT:
        raise MoneyError(f"{what}: {text!r} is less than MTurk's minimum of $0.01")
    return value.quantize(CENT)


def usd(value: Decimal) -> str:
    """The wire format MTurk expects: '2.50' (no symbol, two decimals)."""
    return str(Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP))


def show(value: Decimal) -> str:
    """For people: '$2.50'."""
    return f"${usd(value)}"


def fee_rate(assignments: int | None) -> Decimal:
    """20%, or 40% for a HIT with 10 or more assignments (None: a bonus, always 20%)."""
    if assignments is not None and assignments >= LARGE_HIT_ASSIGNMENTS:
        return LARGE_HIT_RATE
    return BASE_RATE


def fee(amount: Decimal, *, assignments: int | None = None) -> Decimal:
    """MTurk's commission on one reward (of a HIT with `assignments`) or one bonus (None)."""
    commission = (Decimal(amount) * fee_rate(assignments)).quantize(CENT, rounding=ROUND_HALF_UP)
    return max(commission, MINIMUM_FEE)


@dataclass(frozen=True)
class Cost:
    """What something will take from the account: the workers' pay and MTurk's fees."""

    pay: Decimal
    fees: Decimal

    @property
    def total(self) -> Decimal:
        return self.pay + self.fees

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.pay + other.pay, self.fees + other.fees)

    def describe(self) -> str:
        return f"{show(self.total)} ({show(self.pay)} to workers + {show(self.fees)} MTurk fees)"


ZERO = Cost(Decimal("0.00"), Decimal("0.00"))


def hit_cost(reward: Decimal, assignments: int, hits: int = 1) -> Cost:
    """The most `hits` HITs of `assignments` assignments each can cost if every one is approved."""
    per_assignment_fee = fee(reward, assignments=assignments)
    count = assignments * hits
    return Cost(reward * count, per_assignment_fee * count)


def bonus_cost(amount: Decimal) -> Cost:
    return Cost(amount, fee(amount))
