"""`study mturk ...` as a researcher types it, against the emulator through --endpoint-url."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from boto3 import Session
from click.testing import CliRunner

from study.mturk import client
from study.mturk.cli import mturk
from study.mturk.emulator import accept_and_submit
from tests.mturk.conftest import TASK_URL, _botocore_session, with_mturk
from tests.mturk.walk import take_hit


@pytest.fixture
def run(study_folder, emulator, monkeypatch):
    with_mturk(study_folder, reward="2.50", budget="100.00", min_ai_requests=1)
    # Every command builds its boto3 client as a researcher's would; only botocore's data
    # files are shared between them, for speed.
    monkeypatch.setattr(
        client, "new_session", lambda: Session(botocore_session=_botocore_session())
    )

    def invoke(*args, input=None, where=("--endpoint-url", emulator.url)):
        return CliRunner().invoke(mturk, [*args, *where], input=input, catch_exceptions=False)

    return invoke


def _hit_ids(output: str) -> list[str]:
    return re.findall(r"^(3[A-Z0-9]{29})\s", output, flags=re.M)


def test_post_list_and_balance(run, study_folder, emulator):
    posted = run(
        "post", str(study_folder), "--hits", "2", "--assignments", "3", "--task-url", TASK_URL
    )
    assert posted.exit_code == 0, posted.output
    assert "up to $18.00 ($15.00 to workers + $3.00 MTurk fees) (sandbox money)" in posted.output
    hit_ids = _hit_ids(posted.stdout)
    assert len(hit_ids) == 2
    # Each HIT is shown with where to accept it: the emulator's worker page, not MTurk's sandbox
    # site, which has never heard of it.
    assert all(f"{hit_id}  3 x $2.50  {emulator.url}/\n" in posted.stdout for hit_id in hit_ids)
    assert "workersandbox.mturk.com" not in posted.stdout
    listed = run("list", str(study_folder))
    assert all(f"{hit_id}  Assignable" in listed.stdout for hit_id in hit_ids)
    assert "3 available, 0 in progress, 0 awaiting review, 0 reviewed" in listed.stdout
    assert "0 submission(s) awaiting review in all." in listed.stdout
    balance = run("balance", str(study_folder))
    assert "Available: $10000.00" in balance.stdout
    assert (
        "committed $18.00" in balance.stdout
        and "Budget cap: $100.00 ($82.00 left)" in balance.stdout
    )


def _utc(epoch: float) -> str:
    return f"{dt.datetime.fromtimestamp(epoch, dt.timezone.utc):%Y-%m-%d %H:%M} UTC"


def test_list_counts_submissions_awaiting_review_and_when_mturk_pays_them(
    run, study_folder, emulator
):
    first_hit, second_hit = _hit_ids(
        run(
            "post", str(study_folder), "--hits", "2", "--assignments", "2", "--task-url", TASK_URL
        ).stdout
    )
    early = accept_and_submit(emulator.state, second_hit, "A1EARLY", {"verificationCode": "X"})
    emulator.state.advance(2 * 3600)
    late = accept_and_submit(emulator.state, first_hit, "A1LATE", {"verificationCode": "X"})
    listed = run("list", str(study_folder)).stdout
    # A submitted assignment is neither in progress (accepted, not submitted) nor reviewed.
    assert (
        f"{first_hit}  Assignable   max 2: 1 available, 0 in progress, 1 awaiting review, "
        "0 reviewed" in listed
    )
    assert f"MTurk auto-approves (pays) the first at {_utc(late['AutoApprovalTime'])}" in listed
    assert (
        f"2 submission(s) awaiting review in all; MTurk auto-approves (pays) the first at "
        f"{_utc(early['AutoApprovalTime'])}. Decide them with `study mturk review {study_folder}`."
        in listed
    )
    approved = run("approve", str(study_folder), early["AssignmentId"])
    assert approved.exit_code == 0, approved.output
    listed = run("list", str(study_folder)).stdout
    assert (
        f"{second_hit}  Assignable   max 2: 1 available, 0 in progress, 0 awaiting review, "
        "1 reviewed" in listed
    )
    assert (
        f"1 submission(s) awaiting review in all; MTurk auto-approves (pays) the first at "
        f"{_utc(late['AutoApprovalTime'])}." in listed
    )


def test_list_asks_mturk_for_submissions_only_of_hits_that_may_hold_some(
    run, study_folder, emulator, monkeypatch
):
    # A study of many HITs lists them without a call each where the HIT's own counts leave no
    # room for a submission awaiting review.
    asked = []
    botocore_session = _botocore_session()
    botocore_session.register(
        "before-call.mturk-requester.ListAssignmentsForHIT",
        lambda params, **_: asked.append(json.loads(params["body"])["HITId"]),
    )
    monkeypatch.setattr(client, "new_session", lambda: Session(botocore_session=botocore_session))
    first_hit, second_hit = _hit_ids(
        run(
            "post", str(study_folder), "--hits", "2", "--assignments", "2", "--task-url", TASK_URL
        ).stdout
    )
    assert "0 submission(s) awaiting review in all." in run("list", str(study_folder)).stdout
    assert asked == []
    submitted = accept_and_submit(emulator.state, second_hit, "A1ONE", {"verificationCode": "X"})
    listed = run("list", str(study_folder)).stdout
    assert "1 submission(s) awaiting review in all" in listed
    assert asked == [second_hit]
    assert run("approve", str(study_folder), submitted["AssignmentId"]).exit_code == 0
    asked.clear()
    assert "0 submission(s) awaiting review in all." in run("list", str(study_folder)).stdout
    assert asked == []


def test_posting_warns_while_the_consent_page_holds_the_init_placeholder(run, study_folder):
    from study.config_texts import CONSENT_CONTACT_PLACEHOLDER as PLACEHOLDER
    from tests.conftest import CONTACT

    consent = study_folder / "consent.html"
    text = consent.read_text().replace(CONTACT[PLACEHOLDER], PLACEHOLDER)  # as `study init` wrote it
    consent.write_text(text)
    posted = run("post", str(study_folder), "--task-url", TASK_URL)
    # A warning, as `study serve` and `study release build` refuse the placeholder anyway.
    assert posted.exit_code == 0, posted.output
    assert "`study serve` will not start" in posted.stderr and "consent page (consent.html)" in posted.stderr
    consent.write_text(text.replace(PLACEHOLDER, CONTACT[PLACEHOLDER]))
    again = run("post", str(study_folder), "--task-url", TASK_URL)
    assert again.exit_code == 0 and "consent" not in again.stderr


def test_live_mode_asks_showing_the_cost_and_posts_nothing_on_no(run, study_folder, emulator):
    live = ("--live", "--endpoint-url", emulator.url)
    declined = run(
        "post",
        str(study_folder),
        "--assignments",
        "2",
        "--task-url",
        TASK_URL,
        input="n\n",
        where=live,
    )
    assert (
        "LIVE: posting 1 HITs x 2 assignments will cost up to $6.00 ($5.00 to workers + $1.00 MTurk fees)"
        in declined.output
    )
    assert declined.exit_code == 1 and emulator.state.data["hits"] == {}
    accepted = run(
        "post",
        str(study_folder),
        "--assignments",
        "2",
        "--task-url",
        TASK_URL,
        input="y\n",
        where=live,
    )
    assert accepted.exit_code == 0 and len(emulator.state.data["hits"]) == 1


def test_mistakes_are_explained_before_anything_is_sent(run, study_folder, emulator):
    result = run("post", str(study_folder), "--reward", "0.001", "--task-url", TASK_URL)
    assert result.exit_code == 1 and "fractions of a cent" in result.output
    result = run(
        "post", str(study_folder), "--task-url", "http://study.example.org/task?x=1", where=()
    )
    assert (
        result.exit_code == 1 and "is not an https URL" in result.output
    )  # refused before the sandbox
    result = run("notify", str(study_folder), "A1ONE", "--subject", "s" * 201, "--message", "m")
    assert result.exit_code == 1
    assert "MTurk would refuse this NotifyWorkers request, so it was not sent" in result.output
    assert "Subject: 201 characters is more than MTurk allows (200)" in result.output
    assert "Traceback" not in result.output


def test_without_credentials_the_fix_is_named(run, study_folder, monkeypatch):
    monkeypatch.setattr(client, "new_session", Session)  # a fresh credential chain
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = run("balance", str(study_folder), where=())
    assert (
        result.exit_code == 1
        and "No AWS credentials found" in result.output
        and "aws configure" in result.output
    )


def test_review_bonus_and_the_ledger(run, study_folder, emulator, study, task_app_for_folder):
    hit_id = _hit_ids(
        run("post", str(study_folder), "--assignments", "2", "--task-url", TASK_URL).stdout
    )[0]
    good = take_hit(
        emulator.url, task_app_for_folder.test_client(), hit_id, "A1GOODWRITER", ai_requests=2
    )
    bad = accept_and_submit(emulator.state, hit_id, "A1GUESSER", {"verificationCode": "GUESS"})
    declined = run("review", str(study_folder), input="n\n")
    assert "APPROVE  " + good.assignment_id in declined.stdout
    assert (
        "REJECT   " + bad["AssignmentId"] in declined.stdout
        and "does not match our records" in declined.stdout
    )
    assert (
        "Apply 1 approvals and 1 rejections (costs $3.00" in declined.output
        and declined.exit_code == 1
    )
    applied = run("review", str(study_folder), "--yes")
    assert (
        f"{good.assignment_id}: approved" in applied.stdout
        and f"{bad['AssignmentId']}: rejected" in applied.stdout
    )
    first = run(
        "bonus",
        str(study_folder),
        good.assignment_id,
        "--amount",
        "1.50",
        "--reason",
        "Vivid ending",
    )
    assert f"Paid $1.50 (+$0.30 fee) for {good.assignment_id}." in first.stdout
    second = run(
        "bonus",
        str(study_folder),
        good.assignment_id,
        "--amount",
        "1.50",
        "--reason",
        "Vivid ending",
    )
    assert "Already paid" in second.stdout and len(emulator.state.data["bonuses"]) == 1
    ledger_text = run("ledger", str(study_folder)).stdout
    assert "Committed $4.80" in ledger_text and "paid $4.80" in ledger_text


def test_qualification_commands(run, study_folder, emulator):
    created = run(
        "qual", "create", str(study_folder), "coauthor-qualified", "--description", "Passed round 1"
    )
    type_id = created.stdout.split(": ")[1].strip()
    assert (
        run("qual", "grant", str(study_folder), "coauthor-qualified", "A1ONE", "A1TWO").exit_code
        == 0
    )
    holders = run("qual", "list", str(study_folder), "coauthor-qualified").stdout
    assert "A1ONE  value 1" in holders and "A1TWO  value 1" in holders
    revoked = run("qual", "revoke", str(study_folder), "coauthor-qualified", "A1ONE", "A1NONE")
    assert (
        "Revoked coauthor-qualified from 1 workers." in revoked.stdout
        and "A1NONE did not hold it" in revoked.output
    )
    assert (
        f"{type_id}  coauthor-qualified  [custom]" in run("qual", "list", str(study_folder)).stdout
    )


def test_expire_and_delete_say_what_is_missing(run, study_folder, emulator):
    hit_id = _hit_ids(run("post", str(study_folder), "--task-url", TASK_URL).stdout)[0]
    refused = run("delete", str(study_folder), "--all")
    assert refused.exit_code == 1 and "expire` it first" in refused.output
    assert f"{hit_id}: not deleted." in refused.output and "1 HIT was not deleted" in refused.output
    assert f"{hit_id}: expired" in run("expire", str(study_folder), hit_id).stdout
    assert f"{hit_id}: already expired" in run("expire", str(study_folder), "--all").stdout
    assert f"{hit_id}: deleted" in run("delete", str(study_folder), hit_id).stdout


def test_block_and_unblock(run, study_folder, emulator):
    assert (
        "Blocked A1SPAM."
        in run("block", str(study_folder), "A1SPAM", "--reason", "copy-paste").stdout
    )
    assert emulator.state.data["blocks"] == {"A1SPAM": "copy-paste"}
    run("block", str(study_folder), "A1SPAM", "--reason", "appeal", "--undo")
    assert emulator.state.data["blocks"] == {}


def test_emulate_serves_with_the_given_state_file(tmp_path, monkeypatch):
    import study.mturk.emulator as emulator_package

    served = {}
    monkeypatch.setattr(
        emulator_package, "serve",
        lambda state, host, port, announce: (served.update(state=state, port=port), announce(port)),
    )
    path = tmp_path / "dry.json"
    result = CliRunner().invoke(
        mturk, ["emulate", "--port", "9123", "--state", str(path), "--allow-http"]
    )
    assert result.exit_code == 0 and "http://127.0.0.1:9123" in result.output
    assert served["port"] == 9123 and served["state"].path == path and served["state"].allow_http


@pytest.fixture
def study(study_folder):
    from study import config

    return config.load(study_folder)


@pytest.fixture
def task_app_for_folder(study, model_url):
    from study.server import create_app
    from tests.mturk.conftest import with_model

    return create_app(with_model(study, model_url))


def test_emulate_takes_the_balance_as_dollars_or_says_what_is_wrong(tmp_path, monkeypatch):
    import study.mturk.emulator as emulator_package
    from decimal import Decimal

    from study.mturk import money

    served = {}
    monkeypatch.setattr(
        emulator_package, "serve", lambda state, host, port, announce: served.update(state=state)
    )
    result = CliRunner().invoke(
        mturk, ["emulate", "--state", str(tmp_path / "a.json"), "--balance", "$50", "--port", "0"]
    )
    assert result.exit_code == 0
    # A $50 dry run pays a worker as MTurk would, instead of failing in the emulator.
    served["state"].debit(money.Cost(Decimal("2.50"), Decimal("0.50")), "a reward")
    assert served["state"].data["balance"] == "47.00"
    wrong = CliRunner().invoke(
        mturk, ["emulate", "--state", str(tmp_path / "b.json"), "--balance", "lots", "--port", "0"]
    )
    assert wrong.exit_code != 0 and "--balance" in wrong.output and "2.50" in wrong.output


def test_sync_warns_of_a_returned_hit_once_then_counts_it(run, study_folder, emulator, task_app_for_folder):
    import httpx

    hit_id = _hit_ids(
        run("post", str(study_folder), "--assignments", "2", "--task-url", TASK_URL).stdout
    )[0]
    left = take_hit(
        emulator.url, task_app_for_folder.test_client(), hit_id, "A1LEFT", submit=False
    )
    returned = httpx.post(f"{emulator.url}/_emulator/return", data={"AssignmentId": left.assignment_id})
    assert returned.status_code == 200, returned.text
    first = run("sync", str(study_folder))
    assert first.exit_code == 0, first.output
    warning = f"session {left.session_id} (worker A1LEFT, assignment {left.assignment_id}) has no"
    assert warning in first.stdout and "as warned at an earlier sync" not in first.stdout
    second = run("sync", str(study_folder))
    assert second.exit_code == 0, second.output
    assert warning not in second.stdout
    assert (
        "1 session(s) still with no submitted assignment on MTurk (returned or abandoned the "
        "HIT, or still working), as warned at an earlier sync." in second.stdout
    )


def test_rejecting_an_auto_approved_assignment_says_mturk_paid_it_and_what_is_left(run, study_folder, emulator):
    hit_id = _hit_ids(
        run("post", str(study_folder), "--assignments", "2", "--task-url", TASK_URL).stdout
    )[0]
    late = accept_and_submit(emulator.state, hit_id, "A1LATE", {"verificationCode": "X"})
    decided = accept_and_submit(emulator.state, hit_id, "A1DECIDED", {"verificationCode": "X"})
    assert run("approve", str(study_folder), decided["AssignmentId"]).exit_code == 0
    emulator.state.advance(73 * 3600)  # past [mturk] auto_approve_hours (72)

    refused = run("reject", str(study_folder), late["AssignmentId"], "--feedback", "Too short.")
    assert refused.exit_code == 1
    assert (
        f"Assignment {late['AssignmentId']} was auto-approved: nobody decided it before its "
        f"auto-approval time, so MTurk approved and paid it by itself at "
        f"{_utc(late['AutoApprovalTime'])}. A rejection is no longer possible"
    ) in refused.output
    assert f"study mturk block {study_folder} A1LATE --reason TEXT" in refused.output
    # One the researcher approved is not said to be MTurk's doing.
    again = run("reject", str(study_folder), decided["AssignmentId"], "--feedback", "Too short.")
    assert again.exit_code == 1 and "auto-approved" not in again.output
    assert f"Assignment {decided['AssignmentId']} is already approved (paid)" in again.output
    statuses = {a["AssignmentStatus"] for a in emulator.state.data["assignments"].values()}
    assert statuses == {"Approved"}
