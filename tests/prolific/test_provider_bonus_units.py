"""Prolific's adapter of the provider interface (study.providers) takes a bonus and a reward in
minor units: anything that is not a whole number of them is refused, and nothing is paid."""

from __future__ import annotations

from decimal import Decimal

import pytest

from study.prolific import ledger, money, studies, submissions
from study.prolific.provider import PROVIDER
from study.store import reading
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part


@pytest.mark.parametrize("amount", [Decimal("2.5"), 2.5, "1.50"])
def test_the_provider_interface_refuses_a_bonus_that_is_not_whole_minor_units(
    ctx, prolific, task_client, amount
):
    """Prolific's adapter takes minor units; `int(amount)` paid Decimal('2.5') or 2.5 as 2 pence
    without a word (and "1.50" failed with a bare int() error): refuse them, pay nothing."""
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], "0123456789abcdef01234567")
    submissions.sync(ctx)
    with pytest.raises(money.MoneyError):
        PROVIDER.bonus(ctx, took.submission_id, amount, "a clear ending")
    with reading(ctx.engine) as connection:
        assert ledger.entries(connection, ctx.environment, kind="bonus") == []


@pytest.mark.parametrize("reward", [Decimal("300.5"), 300.5, "2.50"])
def test_the_provider_interface_refuses_a_reward_that_is_not_whole_minor_units(ctx, prolific, reward):
    """`int(reward)` drafted 300.5 as 300 pence without a word, and "2.50" failed with a bare
    int() error: refuse them, draft nothing."""
    with pytest.raises(money.MoneyError, match="minor units"):
        PROVIDER.post(ctx, reward=reward, places=2, task_url=TASK_URL)
    assert studies.rows(ctx) == []
    assert prolific.state.data["studies"] == {}
