"""A bonus is paid exactly once: re-run, crashed between MTurk's answer and the ledger, retried
within MTurk's 24-hour token memory and after it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from study.mturk import bonuses, budget, ledger
from study.mturk.emulator import accept_and_submit
from study.store import reading
from tests.mturk.conftest import post_hit

ONE = Decimal("1.00")


@pytest.fixture
def assignment_id(ctx, emulator):
    hit_id = post_hit(ctx, assignments=1, reward="2.50")
    return accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})[
        "AssignmentId"
    ]


def _paid(emulator, assignment_id):
    return [b for b in emulator.state.data["bonuses"] if b["AssignmentId"] == assignment_id]


def _crash_before_confirming(monkeypatch):
    real = ledger.confirm

    def crash(*args, **kwargs):
        raise SystemExit("killed between MTurk's answer and the ledger")

    monkeypatch.setattr(ledger, "confirm", crash)
    return lambda: monkeypatch.setattr(ledger, "confirm", real)


def test_running_the_same_bonus_twice_pays_once(ctx, emulator, assignment_id):
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story").status == "paid"
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story").status == "already paid"
    assert len(_paid(emulator, assignment_id)) == 1
    assert ctx.requester.calls.count("SendBonus") == 1


def test_a_crash_after_paying_is_reconciled_on_the_next_run(
    ctx, emulator, assignment_id, monkeypatch
):
    restore = _crash_before_confirming(monkeypatch)
    with pytest.raises(SystemExit):
        bonuses.pay(ctx, assignment_id, ONE, "Great story")
    restore()
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "intended" and len(_paid(emulator, assignment_id)) == 1
    outcome = bonuses.pay(ctx, assignment_id, ONE, "Great story")
    assert outcome.status == "found paid"
    assert len(_paid(emulator, assignment_id)) == 1
    assert ctx.requester.calls.count("SendBonus") == 1
    with reading(ctx.engine) as connection:
        assert ledger.entries(connection, ctx.environment, kind="bonus")[0]["status"] == "confirmed"


def test_token_already_processed_counts_as_paid(ctx, emulator, assignment_id, monkeypatch):
    restore = _crash_before_confirming(monkeypatch)
    with pytest.raises(SystemExit):
        bonuses.pay(ctx, assignment_id, ONE, "Great story")
    restore()
    # Suppose MTurk's bonus list lagged behind: the retry is sent, with the same token.
    monkeypatch.setattr(bonuses, "_paid_on_mturk", lambda *args: False)
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story").status == "found paid"
    assert ctx.requester.calls.count("SendBonus") == 2
    assert len(_paid(emulator, assignment_id)) == 1


def test_after_24_hours_the_ledger_still_prevents_a_second_payment(
    ctx, emulator, assignment_id, monkeypatch
):
    restore = _crash_before_confirming(monkeypatch)
    with pytest.raises(SystemExit):
        bonuses.pay(ctx, assignment_id, ONE, "Great story")
    restore()
    emulator.state.advance(30 * 3600)  # MTurk has forgotten the token
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story").status == "found paid"
    assert len(_paid(emulator, assignment_id)) == 1


def test_a_second_identical_bonus_needs_to_be_asked_for(ctx, emulator, assignment_id):
    bonuses.pay(ctx, assignment_id, ONE, "Great story")
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True).status == "paid"
    assert bonuses.pay(ctx, assignment_id, Decimal("0.50"), "Clear ending").status == "paid"
    assert len(_paid(emulator, assignment_id)) == 3


def test_one_reason_is_paid_once_whatever_its_spacing_or_a_changed_amount(
    cli, study_folder, assignment_id, emulator
):
    """A researcher re-runs their bonus command from a script whose reason gained a trailing
    space, then with the scheme's amount raised: neither pays the worker for the reason again."""
    bonus = ("bonus", str(study_folder), assignment_id, "--amount")
    assert cli(*bonus, "1.00", "--reason", "Great story").exit_code == 0
    again = cli(*bonus, "1.00", "--reason", "Great  story \n")
    assert again.exit_code == 0 and "Already paid" in again.stdout
    raised = cli(*bonus, "1.50", "--reason", "Great story")
    assert raised.exit_code == 1
    assert (
        f"Assignment {assignment_id} already has a bonus of $1.00 for 'Great story' (paid)"
        in raised.output
        and "add --again" in raised.output
    )
    assert [b["BonusAmount"] for b in _paid(emulator, assignment_id)] == ["1.00"]
    # Asked for on purpose, it is paid, once.
    assert cli(*bonus, "1.50", "--reason", "Great story", "--again").exit_code == 0
    assert [b["BonusAmount"] for b in _paid(emulator, assignment_id)] == ["1.00", "1.50"]


def test_the_budget_cap_refuses_a_bonus_before_paying(make_ctx, emulator):
    ctx = make_ctx(budget="5.00")
    hit_id = post_hit(ctx, assignments=1, reward="2.50")
    assignment_id = accept_and_submit(
        emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"}
    )["AssignmentId"]
    with pytest.raises(budget.BudgetExceeded, match=r"a bonus of \$2.00"):
        bonuses.pay(ctx, assignment_id, Decimal("2.00"), "Great story")  # 3.00 + 2.40 > 5.00
    assert _paid(emulator, assignment_id) == []
    assert (
        bonuses.pay(ctx, assignment_id, Decimal("1.00"), "Great story").status == "paid"
    )  # 3.00 + 1.20


def test_a_refused_bonus_is_cancelled_in_the_ledger(ctx, emulator, assignment_id):
    emulator.state.data["balance"] = "1.00"
    with pytest.raises(bonuses.BonusError, match="MTurk refused"):
        bonuses.pay(ctx, assignment_id, ONE, "Great story")  # needs 1.20 with the fee
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "cancelled" and "enough funds" in entry["note"]


def test_again_run_again_after_a_crash_pays_the_one_more_it_meant(
    ctx, emulator, assignment_id, monkeypatch
):
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story").status == "paid"
    restore = _crash_before_confirming(monkeypatch)
    with pytest.raises(SystemExit):
        bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True)
    restore()
    assert len(_paid(emulator, assignment_id)) == 2
    again = bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True)
    assert again.status == "found paid"
    assert len(_paid(emulator, assignment_id)) == 2  # two were meant, two were paid
    assert ctx.requester.calls.count("ListBonusPayments") >= 1
    with reading(ctx.engine) as connection:
        statuses = [e["status"] for e in ledger.entries(connection, ctx.environment, kind="bonus")]
    assert statuses == ["confirmed", "confirmed"]
    # Asked once more, on purpose, with nothing unfinished: a third bonus.
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True).status == "paid"
    assert len(_paid(emulator, assignment_id)) == 3


def test_again_after_a_crash_before_sending_sends_that_bonus_once(
    ctx, emulator, assignment_id, monkeypatch
):
    bonuses.pay(ctx, assignment_id, ONE, "Great story")
    real = ctx.requester.call

    def killed_before_sending(name, **params):
        if name == "SendBonus":
            raise SystemExit("killed before SendBonus")
        return real(name, **params)

    monkeypatch.setattr(ctx.requester, "call", killed_before_sending)
    with pytest.raises(SystemExit):
        bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True)
    monkeypatch.setattr(ctx.requester, "call", real)
    assert bonuses.pay(ctx, assignment_id, ONE, "Great story", repeat=True).status == "paid"
    assert len(_paid(emulator, assignment_id)) == 2


def test_a_bonus_for_an_assignment_its_worker_returned_is_refused_with_the_fix(ctx, emulator):
    from study.mturk.emulator import worker

    hit_id = post_hit(ctx, assignments=1, reward="2.50")
    taken = worker.accept(emulator.state, hit_id, "A1RETURNER")
    worker.return_assignment(emulator.state, taken["AssignmentId"])
    with pytest.raises(ValueError) as refused:
        bonuses.pay(ctx, taken["AssignmentId"], ONE, "Thanks for trying")
    message = str(refused.value)
    assert f"MTurk has no assignment {taken['AssignmentId']}" in message
    assert "returned or abandoned" in message and "Fix: check the id and the environment" in message
    assert "SendBonus" not in ctx.requester.calls and _paid(emulator, taken["AssignmentId"]) == []
    with reading(ctx.engine) as connection:
        assert ledger.entries(connection, ctx.environment, kind="bonus") == []


def test_a_bonus_for_a_rejected_assignment_says_so_before_and_after_paying(
    cli, study_folder, assignment_id, emulator
):
    """MTurk pays a bonus for rejected work too; the researcher is told it goes to work they
    rejected (a mistyped assignment id, or partial work paid on purpose)."""
    rejected = cli("reject", str(study_folder), assignment_id, "--feedback", "No session found.")
    assert rejected.exit_code == 0, rejected.output
    bonus = ("bonus", str(study_folder), assignment_id, "--amount", "0.50")
    paid = cli(*bonus, "--reason", "Partial work")
    assert paid.exit_code == 0, paid.output
    said = f"{assignment_id}, an assignment you REJECTED (MTurk pays it all the same)"
    assert f"a bonus for {said}: up to $0.60" in paid.stdout
    assert f"Paid $0.50 (+$0.10 fee) for {said}." in paid.stdout
    assert [b["BonusAmount"] for b in _paid(emulator, assignment_id)] == ["0.50"]
