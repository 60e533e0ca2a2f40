"""What Prolific charges on top of a reward or bonus, in the currency's minor unit.

Prolific's pricing page states the platform fee as a share of what participants receive (33.3% for
academic and non-profit researchers, 42.8% for companies), with VAT on the fee where due (UK
accounts). The study cost calculator and the bonus set-up answer these totals; the client is meant
to ask them rather than hard-code a fee, so the rates here are settings of the emulated account.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

# Prolific's minimum reward per hour of estimated completion time, in minor units.
MINIMUM_HOURLY = {"USD": 800, "GBP": 600}


@dataclass(frozen=True)
class Charge:
    """What participants receive, Prolific's fee and the VAT on it; all integers (cents)."""

    rewards: int
    fees: int
    vat: int

    @property
    def total(self) -> int:
        return self.rewards + self.fees + self.vat

    def breakdown(self) -> dict:
        return {"rewards": self.rewards, "fees": self.fees, "vat": self.vat}


def charge(rewards: int, fee_rate: float, vat_rate: float) -> Charge:
    fee = round(rewards * fee_rate)
    return Charge(rewards, fee, round(fee * vat_rate))


def quoted(rewards: int, fee_rate: float, vat_rate: float) -> tuple[Decimal, Decimal]:
    """The fee and VAT as Prolific's bonus set-up answers them: cents to the hundredth, not
    whole cents (docs' example: an amount of 850 answers "fees": 283.34, "total_amount":
    1133.34). What is charged is their sum rounded to the cent (`charged`)."""
    hundredth = Decimal("0.01")
    fee = (rewards * Decimal(str(fee_rate))).quantize(hundredth, ROUND_HALF_UP)
    return fee, (fee * Decimal(str(vat_rate))).quantize(hundredth, ROUND_HALF_UP)


def charged(rewards: int, fee: Decimal, vat: Decimal) -> int:
    """What a bonus set up with this quoted fee and VAT takes from the balance, in cents."""
    return rewards + int((fee + vat).quantize(Decimal("1"), ROUND_HALF_UP))


def hourly_rate(reward: int, minutes: int) -> float:
    """The reward per hour of `minutes`, in minor units."""
    return reward * 60 / minutes


def show(amount: int, currency: str) -> str:
    symbol = {"USD": "$", "GBP": "£"}.get(currency, "")
    return f"{symbol}{amount // 100}.{amount % 100:02d}" + ("" if symbol else f" {currency}")
