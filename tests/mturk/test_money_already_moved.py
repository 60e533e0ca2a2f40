"""Money an MTurk account has already moved, or must not move: another study's assignments,
amounts the provider interface is given, and approvals made on the requester website."""

from __future__ import annotations

from decimal import Decimal

import pytest

from study import config
from study.mturk import bonuses, review, settings
from study.mturk.context import open_context
from study.mturk.emulator import accept_and_submit
from tests.mturk.conftest import new_study, post_hit


def _other_study(tmp_path, requester):
    """A second study on the same requester account (as two studies of one lab would be)."""
    study = config.load(new_study(tmp_path / "other-study", budget="1000.00"))
    return open_context(study, settings.from_study(study), requester)


def test_commands_refuse_an_assignment_of_another_studys_hit(ctx, emulator, requester, tmp_path):
    """README: two studies on one account never see each other's HITs. Approving, rejecting or
    paying a bonus with the other study's folder must not touch the first study's worker."""
    hit_id = post_hit(ctx, assignments=1)
    theirs = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    other = _other_study(tmp_path, requester)
    with pytest.raises(ValueError, match="not one of this study's HITs"):
        review.reject(other, theirs["AssignmentId"], "No session found.")
    with pytest.raises(ValueError, match="not one of this study's HITs"):
        review.approve(other, theirs["AssignmentId"])
    with pytest.raises(ValueError, match="not one of this study's HITs"):
        bonuses.pay(other, theirs["AssignmentId"], Decimal("1.00"), "Great story")
    assignment = emulator.state.data["assignments"][theirs["AssignmentId"]]
    assert assignment["AssignmentStatus"] == "Submitted"  # the first study's worker untouched
    assert emulator.state.data["bonuses"] == []
    # and the other study's review never proposes anything about it
    assert review.proposals(other) == []


def _bonus_entries(ctx):
    from study.mturk import ledger
    from study.store import reading

    with reading(ctx.engine) as connection:
        return ledger.entries(connection, ctx.environment, kind="bonus")


@pytest.mark.parametrize("amount", ["2.505", "-1.00"])
def test_the_provider_interface_checks_a_bonus_amount_as_the_command_does(ctx, emulator, amount):
    """`study mturk bonus --amount 2.505` is refused (fractions of a cent); the same bonus through
    the provider interface (study.providers) was paid as $2.51, and a negative one left an
    'intended' entry of -$1.00 in the ledger that lowered the committed money under the cap."""
    from study.mturk import money
    from study.mturk.provider import PROVIDER

    hit_id = post_hit(ctx, assignments=1)
    done = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    with pytest.raises(money.MoneyError):
        PROVIDER.bonus(ctx, done["AssignmentId"], amount, "Great story")
    assert emulator.state.data["bonuses"] == []
    assert _bonus_entries(ctx) == []


def test_approve_records_a_rejection_already_overridden_on_mturk_even_at_the_cap(make_ctx, emulator):
    """A rejection overridden on the requester website has been paid by MTurk: `approve` must
    record it ("already approved"), not refuse it under the cap as if it were new spending,
    which left the ledger $3.00 short of what MTurk charged."""
    from study.mturk import budget
    from study.store import reading

    ctx = make_ctx(budget="3.00")
    hit_id = post_hit(ctx, assignments=1)
    done = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    review.reject(ctx, done["AssignmentId"], "Wrong code.")
    post_hit(ctx, assignments=1)  # the released $3.00 is reserved again
    ctx.requester.call(  # the researcher changes their mind on MTurk's website
        "ApproveAssignment", AssignmentId=done["AssignmentId"], OverrideRejection=True
    )
    assert review.approve(ctx, done["AssignmentId"]) == "already approved"
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).paid.total == Decimal("3.00")


def test_approve_records_an_assignment_already_approved_on_mturk_even_at_the_cap(make_ctx, emulator):
    """A HIT extended on the website (no reservation) whose second assignment MTurk has already
    approved and paid: `approve` records it as paid, where it refused it under the cap."""
    from study.mturk import budget
    from study.store import reading

    ctx = make_ctx(budget="3.00")
    hit_id = post_hit(ctx, assignments=1)
    ctx.requester.call("CreateAdditionalAssignmentsForHIT", HITId=hit_id, NumberOfAdditionalAssignments=1)
    first = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    second = accept_and_submit(emulator.state, hit_id, "A2WRITER", {"verificationCode": "Y"})
    assert review.approve(ctx, first["AssignmentId"]) == "approved"
    ctx.requester.call("ApproveAssignment", AssignmentId=second["AssignmentId"])  # on the website
    assert review.approve(ctx, second["AssignmentId"]) == "already approved"
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).paid.total == Decimal("6.00")
