"""The budget cap holds however HITs are extended, re-opened, expired or deleted: every slot
that can be paid is reserved under the cap before MTurk is asked, released when it can no
longer be taken, and `balance` shows charged, reserved and released."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import httpx
import pytest

from study.mturk import assignments, budget, hit_actions, hits, ledger
from study.mturk.client import MTurkError
from study.mturk.emulator import accept_and_submit
from study.mturk.review import approve
from study.store import reading
from tests.mturk.conftest import TASK_URL, connect, new_study, post_hit, with_mturk
from tests.store.conftest import postgres_url  # noqa: F401 - the cluster, shared as a fixture
from tests.store.locks import second_inside_first, until_done_or_waiting


def _hit_id(result) -> str:
    assert result.exit_code == 0, result.output
    (hit_id,) = re.findall(r"^(3[A-Z0-9]{29})\s", result.stdout, flags=re.M)
    return hit_id


def test_re_opening_an_expired_hit_is_refused_past_the_cap(cli, tmp_path, emulator):
    folder = new_study(tmp_path / "study", pay="$0.40", budget="1.00")
    post = ("post", str(folder), "--assignments", "2", "--reward", "0.40", "--task-url", TASK_URL)
    first = _hit_id(cli(*post))  # 2 x (0.40 + 0.08) = 0.96
    assert f"{first}: expired" in cli("expire", str(folder), first).stdout
    assert cli("sync", str(folder)).exit_code == 0  # the first HIT's slots are released
    _hit_id(cli(*post))  # another 0.96: fits again
    reopened = cli("extend", str(folder), first, "--hours", "1")
    assert reopened.exit_code == 1 and "Refusing re-opening 2 assignments" in reopened.output
    assert "up to" not in reopened.output  # refused before any confirmation
    assert "$0.96 is already committed" in reopened.output
    # MTurk was not asked: nobody can take the first HIT.
    taken = httpx.post(
        f"{emulator.url}/_emulator/accept", data={"HITId": first, "WorkerId": "A1THIRD"}
    )
    assert taken.status_code == 409
    balance = cli("balance", str(folder)).stdout
    assert "Budget cap: $1.00 ($0.04 left)" in balance


def test_re_opening_within_the_cap_reserves_the_slots_again(ctx, emulator):
    hit_id = post_hit(ctx, assignments=2, reward="2.50")
    done = accept_and_submit(emulator.state, hit_id, "A1FIRST", {"verificationCode": "X"})
    hit_actions.expire(ctx, hit_id)
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).reserved.total == Decimal("3.00")
    hit_actions.extend(ctx, hit_id, hours=1)
    with reading(ctx.engine) as connection:
        reserved = budget.totals(connection, ctx.environment).reserved.total
    assert reserved == Decimal("6.00")  # the submission's reward and the slot open again
    assert approve(ctx, done["AssignmentId"]) == "approved"


def test_approving_a_submission_sync_found_unreserved_checks_the_cap(make_ctx, emulator):
    ctx = make_ctx(budget="3.00")
    hit_id = post_hit(ctx, assignments=1, reward="2.50")
    # Someone adds an assignment on the requester website, outside the budget.
    ctx.requester.client.create_additional_assignments_for_hit(
        HITId=hit_id, NumberOfAdditionalAssignments=1
    )
    report = assignments.sync(ctx)
    assert "1 open assignments the budget never reserved" in report.problems[0]
    first, second = (
        accept_and_submit(emulator.state, hit_id, worker, {"verificationCode": "X"})
        for worker in ("A1FIRST", "A1SECOND")
    )
    assignments.sync(ctx)  # records what MTurk may owe, past the cap, without reserving it
    assert approve(ctx, first["AssignmentId"]) == "approved"
    with pytest.raises(budget.BudgetExceeded, match="no reservation covered") as refused:
        approve(ctx, second["AssignmentId"])
    waiting = emulator.state.data["assignments"][second["AssignmentId"]]
    assert waiting["AssignmentStatus"] == "Submitted"
    # "spend less" cannot apply to work already done: the refusal says MTurk pays it anyway.
    auto = dt.datetime.fromtimestamp(waiting["AutoApprovalTime"], dt.timezone.utc)
    assert f"MTurk approves and pays it by itself at {auto:%Y-%m-%d %H:%M} UTC" in str(
        refused.value
    )
    assert ctx.requester.client.get_account_balance()["AvailableBalance"] == "9997.00"


def _lose_the_answer_to(ctx, operation, monkeypatch):
    """The request reaches MTurk, and the command dies before it hears the answer."""
    real = ctx.requester.call

    def call(name, **params):
        response = real(name, **params)
        if name == operation:
            raise SystemExit("killed after MTurk processed the request")
        return response

    monkeypatch.setattr(ctx.requester, "call", call)
    return lambda: monkeypatch.setattr(ctx.requester, "call", real)


def test_extend_run_again_after_a_crash_adds_the_assignments_once(ctx, emulator, monkeypatch):
    hit_id = post_hit(ctx, assignments=3, reward="2.50")
    restore = _lose_the_answer_to(ctx, "CreateAdditionalAssignmentsForHIT", monkeypatch)
    with pytest.raises(SystemExit):
        hit_actions.extend(ctx, hit_id, more=2)
    restore()
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 5
    again = hit_actions.extend(ctx, hit_id, more=2)
    assert "3 -> 5" in again[0] and "nothing more was added" in again[0]
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 5
    emulator.state.advance(25 * 3600)  # MTurk forgot the token; the ledger did not
    hit_actions.extend(ctx, hit_id, more=2, hours=1)
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 7  # asked anew: added
    with reading(ctx.engine) as connection:
        assert budget.totals(connection, ctx.environment).reserved.total == Decimal("21.00")


def test_an_extend_that_never_reached_mturk_is_sent_by_the_next_run(ctx, emulator, monkeypatch):
    hit_id = post_hit(ctx, assignments=3, reward="2.50")
    real = ctx.requester.call

    def unreachable(name, **params):
        if name == "CreateAdditionalAssignmentsForHIT":
            raise MTurkError(name, "ConnectionError", "cannot reach MTurk")
        return real(name, **params)

    monkeypatch.setattr(ctx.requester, "call", unreachable)
    with pytest.raises(hits.HitError, match="Run the same extend again"):
        hit_actions.extend(ctx, hit_id, more=2)
    monkeypatch.setattr(ctx.requester, "call", real)
    hit_actions.extend(ctx, hit_id, more=2)
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 5


def test_delete_releases_unused_slots_and_balance_shows_the_books(cli, tmp_path, emulator):
    folder = new_study(tmp_path / "study", budget="100.00")
    hit_id = _hit_id(cli("post", str(folder), "--assignments", "3", "--task-url", TASK_URL))
    done = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    assert cli("expire", str(folder), hit_id).exit_code == 0
    assert cli("approve", str(folder), done["AssignmentId"]).exit_code == 0
    assert f"{hit_id}: deleted" in cli("delete", str(folder), hit_id).stdout
    balance = cli("balance", str(folder)).stdout
    assert "charged   $3.00 ($2.50 to workers + $0.50 MTurk fees)" in balance
    assert "reserved  $0.00" in balance and "released  $6.00" in balance
    assert "committed $3.00 = charged $3.00 + still spendable $0.00" in balance
    assert "Budget cap: $100.00 ($97.00 left)" in balance


def test_sync_releases_the_slots_of_a_hit_deleted_elsewhere(ctx, emulator):
    hit_id = post_hit(ctx, assignments=2, reward="2.50")
    hits.study_hits(ctx)  # seen once
    mturk = ctx.requester.client  # the requester website, say
    mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=0)
    mturk.delete_hit(HITId=hit_id)
    assignments.sync(ctx)
    with reading(ctx.engine) as connection:
        totals = budget.totals(connection, ctx.environment)
    assert totals.committed.total == Decimal("0.00") and totals.released.total == Decimal("6.00")


def test_an_unknown_hit_id_is_an_error_and_a_deleted_one_is_said_so(cli, tmp_path, emulator):
    folder = new_study(tmp_path / "study", budget="100.00")
    hit_id = _hit_id(cli("post", str(folder), "--task-url", TASK_URL))
    unknown = "3" + "X" * 29
    for command in ("expire", "delete"):
        result = cli(command, str(folder), unknown)
        assert result.exit_code == 1, result.output
        assert "not one of this study's HITs" in result.output
        assert "already deleted" not in result.output
    assert cli("expire", str(folder), hit_id).exit_code == 0
    assert cli("delete", str(folder), hit_id).exit_code == 0
    for command in ("expire", "delete"):
        again = cli(command, str(folder), hit_id)
        assert again.exit_code == 0 and f"{hit_id}: already deleted" in again.stdout


def test_the_readmes_worked_example_holds(cli, tmp_path, emulator):
    folder = new_study(tmp_path / "study", budget="10.00")
    hit_id = _hit_id(cli("post", str(folder), "--assignments", "3", "--task-url", TASK_URL))
    assert "Budget cap: $10.00 ($1.00 left)" in cli("balance", str(folder)).stdout
    done = accept_and_submit(emulator.state, hit_id, "A1WRITER", {"verificationCode": "X"})
    assert cli("approve", str(folder), done["AssignmentId"]).exit_code == 0
    books = cli("balance", str(folder)).stdout
    assert "charged   $3.00" in books and "reserved  $6.00" in books
    assert cli("expire", str(folder), hit_id).exit_code == 0
    books = cli("balance", str(folder)).stdout
    assert "released  $6.00" in books and "committed $3.00" in books and "($7.00 left)" in books
    assert cli("extend", str(folder), hit_id, "--hours", "24").exit_code == 0
    assert "($1.00 left)" in cli("balance", str(folder)).stdout
    bonus = cli("bonus", str(folder), done["AssignmentId"], "--amount", "1.00", "--reason", "Thanks")
    assert bonus.exit_code == 1 and "Refusing a bonus of $1.00" in bonus.output
    assert emulator.state.data["bonuses"] == []


def test_study_status_shows_mturks_committed_money_against_the_cap(cli, tmp_path, emulator):
    from click.testing import CliRunner

    from study.cli import main

    folder = new_study(tmp_path / "study", pay="$0.40", budget="1.00")
    _hit_id(cli("post", str(folder), "--assignments", "2", "--reward", "0.40", "--task-url", TASK_URL))
    status = CliRunner().invoke(main, ["status", str(folder)])
    assert status.exit_code == 0, status.output
    (line,) = [line for line in status.output.splitlines() if line.startswith("MTurk (")]
    # Two slots of $0.40 with MTurk's 20% fee reserved; nothing submitted or paid yet.
    assert line.endswith(": 0 synced submissions awaiting review or approved; committed $0.96 of a $1.00 cap, paid $0.00")


# -- two commands at once on a PostgreSQL study database ----------------------------------


@pytest.fixture
def pg_engine(postgres_url):  # noqa: F811 - the run's PostgreSQL cluster (tests/store/conftest.py)
    from study.store import create_tables, make_engine
    from study.store.mturk import mturk_payments

    engine = make_engine(postgres_url)
    create_tables(engine)
    with engine.begin() as connection:
        connection.execute(mturk_payments.delete())
    yield engine
    engine.dispose()


@pytest.mark.postgres
def test_two_bonus_commands_at_once_on_postgresql_never_pass_the_cap_together(pg_engine):
    import threading

    from study.store import writing

    cap = budget.Budget(cap=Decimal("10.00"), live=True)
    environment = "live:123456789012"

    def intend(assignment_id: str) -> None:
        with writing(pg_engine) as connection:
            ledger.intend_bonus(connection, environment, assignment_id=assignment_id,
                                worker_id="A1" + assignment_id, hit_id="3HIT", amount=Decimal("6.00"),
                                reason="a vivid scene", repeat=False, budget=cap)  # fmt: skip

    second: dict = {}

    def second_command() -> None:
        try:
            intend("3SECOND")
            second["outcome"] = "intended"
        except budget.BudgetExceeded as error:
            second["outcome"] = str(error)

    # Each bonus costs $7.20 with MTurk's fee: either fits under the $10.00 cap, not both.
    with writing(pg_engine) as connection:
        ledger.intend_bonus(connection, environment, assignment_id="3FIRST", worker_id="A1FIRST",
                            hit_id="3HIT", amount=Decimal("6.00"), reason="a vivid scene",
                            repeat=False, budget=cap)  # fmt: skip
        # The first command has checked the cap and written its intent, not yet committed,
        # when the second one checks.
        thread = threading.Thread(target=second_command)
        thread.start()
        until_done_or_waiting(thread, pg_engine)
    thread.join()

    assert "Refusing a bonus of $6.00" in second["outcome"]
    with reading(pg_engine) as connection:
        committed = budget.totals(connection, environment).committed.total
    assert committed == Decimal("7.20")


@pytest.mark.postgres
def test_the_same_bonus_run_twice_at_once_on_postgresql_is_one_entry(pg_engine):
    """Two shells run `study mturk bonus` for the same bonus at the same moment, on a study
    database in PostgreSQL (no cap in the sandbox): the second finds the first's entry, which
    the token of its SendBonus then makes one payment, instead of failing on a duplicate key."""
    import threading

    from study.store import writing

    environment = "sandbox:123456789012"

    def intend():
        return ledger.intend_bonus(connection, environment, assignment_id="3SAME", worker_id="A1SAME",
                                   hit_id="3HIT", amount=Decimal("1.00"), reason="a vivid scene", repeat=False,
                                   budget=None)  # fmt: skip

    second: dict = {}

    def second_command() -> None:
        with writing(pg_engine) as own:
            second["entry"], second["created"] = ledger.intend_bonus(
                own, environment, assignment_id="3SAME", worker_id="A1SAME", hit_id="3HIT",
                amount=Decimal("1.00"), reason="a vivid scene", repeat=False, budget=None)  # fmt: skip

    with writing(pg_engine) as connection:
        first, created = intend()
        # The first command has written its intent, not yet committed, when the second reads.
        thread = threading.Thread(target=second_command)
        thread.start()
        until_done_or_waiting(thread, pg_engine)
    thread.join()

    assert created and second == {"entry": first, "created": False}
    with reading(pg_engine) as connection:
        assert len(ledger.entries(connection, environment, kind="bonus")) == 1


@pytest.mark.postgres
def test_two_assignments_of_one_hit_bound_at_once_on_postgresql_each_keep_their_reward(pg_engine):
    """`study mturk sync` in one shell and `approve` in another bind two assignments of one HIT
    to its reward slots at the same moment, on PostgreSQL: each gets a slot of its own. Both
    once read the same slot as free, and the second's update took it over, leaving the first
    assignment with no reward entry: charged less than MTurk paid, and the cap unguarded."""
    from study.store import writing

    environment = "sandbox:123456789012"
    with writing(pg_engine) as connection:
        ledger.plan_rewards(connection, environment, hit_token="post-1", reward=Decimal("3.00"),
                            max_assignments=2, count=2, hit_id="3HIT")  # fmt: skip

    def bind(connection, assignment_id: str) -> dict:
        return ledger.bind_reward(connection, environment, hit_id="3HIT", assignment_id=assignment_id,
                                  worker_id=f"A{assignment_id}", reward=Decimal("3.00"), max_assignments=2,
                                  budget=None)  # fmt: skip

    # The first has taken a slot, not yet committed, when the second looks for a free one.
    first, second = second_inside_first(pg_engine, lambda c: bind(c, "3FIRST"), lambda c: bind(c, "3SECOND"))

    assert second["id"] != first["id"]
    with reading(pg_engine) as connection:
        bound = {e["assignment_id"] for e in ledger.entries(connection, environment, kind="reward")}
    assert bound == {"3FIRST", "3SECOND"}


def test_an_extend_the_cap_stopped_half_way_adds_the_assignments_once_when_run_again(
    cli, tmp_path, emulator
):
    folder = new_study(tmp_path / "study", budget="12.00")
    hit_id = _hit_id(cli("post", str(folder), "--assignments", "3", "--task-url", TASK_URL))
    assert cli("expire", str(folder), hit_id).exit_code == 0  # its 3 slots are released
    # Re-launching it: 2 more assignments and a day longer: 5 x $3.00 is past the $12.00 cap.
    relaunch = ("extend", str(folder), hit_id, "--assignments", "2", "--hours", "24")
    refused = cli(*relaunch)
    assert refused.exit_code == 1 and "Refusing" in refused.output
    with_mturk(folder, budget="20.00")  # the researcher raises the cap and runs it again
    again = cli(*relaunch)
    assert again.exit_code == 0, again.output
    assert emulator.state.data["hits"][hit_id]["MaxAssignments"] == 5  # asked for once: 3 + 2
    assert "reserved  $15.00" in cli("balance", str(folder)).stdout


def test_balance_says_by_how_much_unreserved_submissions_put_the_books_over_the_cap(
    cli, tmp_path, emulator
):
    folder = new_study(tmp_path / "study", budget="3.00")
    hit_id = _hit_id(cli("post", str(folder), "--task-url", TASK_URL))
    # Assignments added on the requester website: their submissions count, never reserved.
    connect(emulator.url).client.create_additional_assignments_for_hit(
        HITId=hit_id, NumberOfAdditionalAssignments=1
    )
    for worker in ("A1FIRST", "A1SECOND"):
        accept_and_submit(emulator.state, hit_id, worker, {"verificationCode": "X"})
    assert cli("sync", str(folder)).exit_code == 0
    books = cli("balance", str(folder)).stdout
    assert "committed $6.00" in books and "$-" not in books
    assert "Budget cap: $3.00 (over by $3.00: MTurk has paid or may pay submissions" in books
    assert "Fix: raise budget in [mturk] of study.toml" in books
