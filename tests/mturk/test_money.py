"""MTurk's fees: 20%, 40% on HITs with 10 or more assignments, at least $0.01; Decimal only."""

from __future__ import annotations

from decimal import Decimal

import pytest

from study.mturk import money


@pytest.mark.parametrize(
    ("reward", "assignments", "fee"),
    [
        ("19.99", 9, "4.00"),  # 20% of 19.99 = 3.998, rounded half up to the cent
        ("19.99", 10, "8.00"),  # 40% = 7.996
        ("2.50", 1, "0.50"),
        ("2.50", 10, "1.00"),
        ("0.01", 1, "0.01"),  # 0.002 -> the $0.01 minimum
        ("0.05", 20, "0.02"),
        ("0.02", 1, "0.01"),
    ],
)
def test_reward_fees(reward, assignments, fee):
    assert money.fee(Decimal(reward), assignments=assignments) == Decimal(fee)


def test_bonus_fees_stay_at_twenty_percent_with_the_minimum():
    assert money.fee(Decimal("19.99")) == Decimal("4.00")
    assert money.fee(Decimal("0.03")) == Decimal("0.01")


def test_a_hit_costs_its_rewards_plus_fees_per_assignment():
    cost = money.hit_cost(Decimal("19.99"), 10, hits=2)
    assert (cost.pay, cost.fees, cost.total) == (
        Decimal("399.80"),
        Decimal("160.00"),
        Decimal("559.80"),
    )
    assert (
        money.hit_cost(Decimal("2.50"), 9).describe()
        == "$27.00 ($22.50 to workers + $4.50 MTurk fees)"
    )


@pytest.mark.parametrize(("text", "value"), [("2.50", "2.50"), ("$3", "3.00"), (" 0.01 ", "0.01")])
def test_amounts_are_parsed_exactly(text, value):
    assert money.parse_usd(text) == Decimal(value)
    assert money.usd(money.parse_usd(text)) == value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0.001", "fractions of a cent"),
        ("0", r"minimum of \$0\.01"),
        ("two", "not a dollar amount"),
        # Decimal reads these as 1000, 10 and 12: a typo of "1.3" would pay $1,000.
        ("1e3", "not a dollar amount"),
        ("1_0", "not a dollar amount"),
        ("\u0661\u0662", "not a dollar amount"),
        (2.5, "not the float"),
    ],
)
def test_bad_amounts_are_refused_with_the_fix(text, words):
    with pytest.raises(money.MoneyError, match=words):
        money.parse_usd(text)
