"""Bonuses on Prolific through the ledger: paid once, whatever happens between sending the
non-idempotent pay call and hearing back, with Prolific's fees counted against the cap."""

from __future__ import annotations

import httpx
import pytest

from study.prolific import ledger, money, payments, studies, submissions
from study.store import reading
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part
from tests.store.conftest import postgres_url  # noqa: F401 - the cluster, shared as a fixture
from tests.store.locks import second_inside_first, until_done_or_waiting


@pytest.fixture
def submission(ctx, prolific, task_client) -> str:
    """A finished participant's submission, synced."""
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    took = take_part(prolific, task_client, made["study_id"], "0123456789abcdef01234567")
    submissions.sync(ctx)
    return took.submission_id


def pay_calls(prolific) -> list[int]:
    """How often the pay call reached Prolific, per bulk payment."""
    records = httpx.get(prolific.url + "/_emulator/bonus-payments").json()
    records = records.get("results", records) if isinstance(records, dict) else records
    return [len(r["pay_calls"]) if isinstance(r["pay_calls"], list) else r["pay_calls"] for r in records]


def settle(prolific) -> None:
    assert httpx.post(prolific.url + "/_emulator/settle").status_code == 200


def lose_next_pay(prolific, when: str) -> None:
    answer = httpx.post(prolific.url + "/_emulator/faults", json={
        "method": "POST", "path": "/api/v1/bulk-bonus-payments/*/pay/", "when": when, "times": 1,
        "status": None})  # fmt: skip
    assert answer.status_code in (200, 201), answer.text


def bonuses_on_prolific(ctx, submission_id: str) -> list[int]:
    return ctx.client.get(f"submissions/{submission_id}/")["bonus_payments"]


def test_a_bonus_is_paid_once_and_asking_again_pays_nothing(ctx, prolific, submission):
    first = payments.pay(ctx, submission, 100, "a clear ending")
    assert first.status == "paid" and first.cost.fees > 0
    assert payments.pay(ctx, submission, 100, "a clear ending").status == "already paid"
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [100]
    assert pay_calls(prolific) == [1]
    again = payments.pay(ctx, submission, 100, "a clear ending", repeat=True)
    assert again.status == "paid"
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [100, 100]


def test_one_reason_is_paid_once_whatever_its_spacing_or_a_changed_amount(ctx, prolific, submission):
    # A bonus script run again with a stray space, or with the scheme's amount changed, must not
    # pay the participant a second time for the same reason; --again still does, on purpose.
    assert payments.pay(ctx, submission, 100, "a clear ending").status == "paid"
    assert payments.pay(ctx, submission, 100, " a clear  ending ").status == "already paid"
    with pytest.raises(payments.BonusError, match=r"already has a bonus of \$1.00 for 'a clear ending' \(paid\)"):
        payments.pay(ctx, submission, 150, "a clear ending")
    assert payments.pay(ctx, submission, 150, "a clear ending", repeat=True).status == "paid"
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [100, 150]


def test_a_lost_answer_is_reconciled_from_prolifics_records_and_pay_is_never_sent_twice(ctx, prolific, submission):
    lose_next_pay(prolific, "after")  # Prolific queues the payment; the answer never arrives
    with pytest.raises(payments.BonusError, match="may or may not have been paid"):
        payments.pay(ctx, submission, 150, "extra effort")
    # Prolific pays asynchronously: not shown yet, so the re-run waits rather than pays.
    assert payments.pay(ctx, submission, 150, "extra effort").status == "pending"
    assert pay_calls(prolific) == [1]
    settle(prolific)
    assert payments.pay(ctx, submission, 150, "extra effort").status == "found paid"
    assert payments.pay(ctx, submission, 150, "extra effort").status == "already paid"
    assert pay_calls(prolific) == [1]
    assert bonuses_on_prolific(ctx, submission) == [150]
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "confirmed" and entry["pay_sent_at"] is not None


def test_a_pay_call_that_never_arrived_is_only_replaced_when_the_researcher_abandons_it(ctx, prolific, submission):
    lose_next_pay(prolific, "before")  # the connection drops before Prolific does anything
    with pytest.raises(payments.BonusError):
        payments.pay(ctx, submission, 150, "extra effort")
    settle(prolific)
    assert payments.pay(ctx, submission, 150, "extra effort").status == "pending"
    assert pay_calls(prolific) == [0]
    outcome = payments.pay(ctx, submission, 150, "extra effort", abandon=True)
    assert outcome.status == "paid"
    assert sorted(pay_calls(prolific)) == [0, 1]  # a new bulk payment; the old one never paid
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [150]


def test_the_cap_counts_prolifics_bonus_fee_before_paying(make_ctx, prolific, task_client):
    ctx = make_ctx(budget="10.50")
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 3, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])  # 3 x (2.50 + fee) = 10.00 reserved
    # The task server of this fixture shares `ctx`'s database only; this participant comes
    # through the emulator alone, since the cap is what is tested.
    joined = httpx.post(prolific.url + "/_emulator/take-part",
                        json={"study_id": made["study_id"], "participant_id": "ab" * 12}).json()  # fmt: skip
    httpx.get(f"{prolific.url}/submissions/complete?cc={made['completion_code']}&participant_id={'ab' * 12}")
    submissions.sync(ctx)
    with pytest.raises(ledger.BudgetExceeded, match="Prolific fees"):
        payments.pay(ctx, joined["submission_id"], 40, "a kind note")  # 0.40 + 0.13 fee > 0.50 left
    assert pay_calls(prolific) == [0]
    assert payments.pay(ctx, joined["submission_id"], 30, "a kind note").status == "paid"


def workspace_balance(ctx) -> int:
    return ctx.client.get(f"workspaces/{ctx.workspace_id}/balance/")["total_balance"]


def test_a_bonus_fee_in_fractions_of_a_penny_is_booked_as_prolific_charges_it(ctx, prolific, submission):
    # Prolific answers the set-up's fee to a hundredth of a penny (docs: "fees": 283.34): a
    # bonus of 2.25 at the emulator's 33.3% answers 74.93 and costs 3.00.
    before = workspace_balance(ctx)
    outcome = payments.pay(ctx, submission, 225, "a vivid scene")
    settle(prolific)
    charged = before - workspace_balance(ctx)
    assert charged == 300
    assert outcome.cost.total == charged
    assert outcome.cost.describe().startswith(money.show(300, ctx.currency) + " ")
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["amount"] + entry["fee"] == charged


def test_a_bonus_for_a_submission_of_another_study_is_refused(ctx, prolific, submission):
    with pytest.raises(Exception, match="Prolific has no submission|not one of this study's"):
        payments.pay(ctx, "ffffffffffffffffffffffff", 100, "nobody")
    assert pay_calls(prolific) == []


def test_a_run_killed_after_setting_the_bonus_up_pays_it_once_on_the_next_run(ctx, prolific, submission):
    def killed(cost, status):  # the process dies while asking the researcher, before anything is paid
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        payments.pay(ctx, submission, 120, "a vivid scene", confirm=killed)
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "intended" and entry["bulk_payment_id"] and entry["pay_sent_at"] is None
    assert payments.pay(ctx, submission, 120, "a vivid scene").status == "paid"
    assert pay_calls(prolific) == [1]  # the same bulk payment, paid once
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [120]


def test_the_same_bonus_run_twice_at_once_is_paid_once(ctx, make_ctx, prolific, submission):
    """Two terminals (or a script and a researcher) pay the same bonus at the same moment: the
    first is still waiting for Prolific to set the payment up when the second runs."""
    import threading

    answer = httpx.post(prolific.url + "/_emulator/faults", json={
        "method": "POST", "path": "/api/v1/submissions/bonus-payments/", "when": "after",
        "times": 1, "status": None, "hold": True})  # fmt: skip
    assert answer.status_code == 200, answer.text
    first: dict = {}

    def first_run() -> None:
        try:
            first["outcome"] = payments.pay(ctx, submission, 150, "extra effort").status
        except payments.BonusError as error:
            first["outcome"] = str(error)

    thread = threading.Thread(target=first_run)
    thread.start()
    try:
        for _ in range(1200):  # a bound for a stuck run, not a measured time
            if httpx.get(prolific.url + "/_emulator/held").json()["held"] == 1:
                break
            thread.join(0.05)
        second = payments.pay(make_ctx(budget="1000.00"), submission, 150, "extra effort")
        assert second.status == "paid"
    finally:
        httpx.delete(prolific.url + "/_emulator/faults")  # the first run's set-up answer is lost
        thread.join()
    settle(prolific)
    # The researcher runs it once more to be sure.
    assert payments.pay(ctx, submission, 150, "extra effort").status == "already paid"
    settle(prolific)
    assert bonuses_on_prolific(ctx, submission) == [150]
    with reading(ctx.engine) as connection:
        (entry,) = ledger.entries(connection, ctx.environment, kind="bonus")
    assert entry["status"] == "confirmed"


def test_submissions_prolific_made_in_the_same_second_each_get_their_reward_entry(ctx, prolific, task_client, monkeypatch):
    """Prolific's ids are MongoDB ObjectIds: made in the same second by one of its servers, two
    differ only in their last characters (a counter)."""
    from study.prolific.emulator import participant

    counter = iter(range(0x10, 0x100))
    monkeypatch.setattr(participant, "new_id", lambda: f"6650f1a2b3c4d5e6f7a8b{next(counter):03x}")
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 1, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    # A place added on Prolific's website: the ledger reserved one place only.
    ctx.client.patch(f"studies/{made['study_id']}/", {"total_available_places": 3})
    took = [take_part(prolific, task_client, made["study_id"], pid) for pid in ("a1" * 12, "b2" * 12, "c3" * 12)]
    report = submissions.sync(ctx)
    assert sorted(s.submission_id for s in report.submissions) == sorted(t.submission_id for t in took)
    with reading(ctx.engine) as connection:
        bound = {t.submission_id: ledger.reward_entry(connection, ctx.environment, t.submission_id)
                 for t in took}  # fmt: skip
    assert [e["status"] for e in bound.values()] == ["intended", "unreserved", "unreserved"]
    assert len({e["id"] for e in bound.values()}) == 3


@pytest.mark.postgres
def test_the_same_bonus_run_twice_at_once_on_postgresql_is_one_entry(postgres_url):  # noqa: F811
    """Two shells run `study prolific bonus` for the same bonus at the same moment, on a study
    database in PostgreSQL: the second finds the first's entry (which only one run may send the
    pay call of) instead of failing on a duplicate key."""
    import threading

    from study.store import create_tables, make_engine, writing
    from study.store.prolific import prolific_payments

    engine = make_engine(postgres_url)
    create_tables(engine)
    with engine.begin() as connection:
        connection.execute(prolific_payments.delete())
    environment = "prolific:researcher"
    bonus = dict(study_id="s1", submission_id="sub1", participant_id="p1", amount=100,
                 reason="a clear ending", repeat=False, currency="GBP")  # fmt: skip
    second: dict = {}

    def second_command() -> None:
        with writing(engine) as own:
            second["entry"], second["created"] = ledger.intend_bonus(own, environment, **bonus)

    try:
        with writing(engine) as connection:
            first, created = ledger.intend_bonus(connection, environment, **bonus)
            # The first command has written its intent, not yet committed, when the second reads.
            thread = threading.Thread(target=second_command)
            thread.start()
            until_done_or_waiting(thread, engine)
        thread.join()
        assert created and second == {"entry": first, "created": False}
        with reading(engine) as connection:
            assert len(ledger.entries(connection, environment, kind="bonus")) == 1
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_two_submissions_of_one_study_bound_at_once_on_postgresql_each_keep_their_place(postgres_url):  # noqa: F811
    """`study prolific sync` in one shell and `approve` in another bind two submissions of one
    study to its places at the same moment, on PostgreSQL: each gets a place of its own. Both
    once read the same place as open, and the second's update took it from the first, which was
    left with no reward entry: charged less than Prolific was paid, and the cap unguarded."""
    from study.store import create_tables, make_engine, writing
    from study.store.prolific import prolific_payments

    engine = make_engine(postgres_url)
    create_tables(engine)
    environment = "prolific:researcher"

    def bind(connection, submission_id: str) -> dict:
        return ledger.bind_reward(connection, environment, study_id="s2", submission_id=submission_id,
                                  participant_id=f"p-{submission_id}", reward=250, fee=83, currency="GBP")  # fmt: skip

    try:
        with engine.begin() as connection:
            connection.execute(prolific_payments.delete())
        with writing(engine) as connection:
            ledger.plan_places(connection, environment, study_id="s2", reward=250, fee=83, count=2, currency="GBP")
        # The first has taken a place, not yet committed, when the second looks for an open one.
        first, second = second_inside_first(engine, lambda c: bind(c, "sub-first"), lambda c: bind(c, "sub-second"))
        assert second["id"] != first["id"]
        with reading(engine) as connection:
            bound = {e["submission_id"] for e in ledger.entries(connection, environment, kind="reward")}
        assert bound == {"sub-first", "sub-second"}
    finally:
        engine.dispose()
