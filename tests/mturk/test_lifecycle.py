"""The whole study on (emulated) MTurk, through the real boto3 client and the real task server:
post, workers take the HIT page by page and submit to turkSubmitTo, sync reconciles, review
decides by the documented rules, approvals and bonuses are paid, then the HIT is closed."""

from __future__ import annotations

from decimal import Decimal

import httpx

from study.mturk import assignments, bonuses, budget, hit_actions, hits, ledger, review, workers
from study.mturk.emulator import accept_and_submit
from study.store import reading
from tests.mturk.conftest import TASK_URL, post_hit
from tests.mturk.walk import take_hit


def test_a_study_from_posting_to_payment(ctx, emulator, task_app):
    mturk = ctx.requester.client
    hit_id = post_hit(ctx, assignments=4, reward="2.50")
    task = task_app.test_client()

    # A preview shows the task without starting a session.
    preview = httpx.get(f"{emulator.url}/_emulator/preview", params={"HITId": hit_id}).json()[
        "PreviewURL"
    ]
    assert b"preview" in task.get(preview.removeprefix("https://study.example.org")).data.lower()

    good = take_hit(emulator.url, task, hit_id, "A1GOODWRITER", ai_requests=3)
    assert good.submitted.status_code == 200
    assert "turkSubmitTo=" in good.task_url and "round=main&lang=en" in good.task_url
    lazy = take_hit(emulator.url, task, hit_id, "A1NOAIWRITER", ai_requests=0)
    quitter = take_hit(emulator.url, task, hit_id, "A1QUITTER", finish=False)
    # The quitter submits the HIT with a made-up code instead of finishing.
    httpx.post(
        f"{emulator.url}/mturk/externalSubmit",
        data={"assignmentId": quitter.assignment_id, "verificationCode": "MADEUP123456"},
    )
    guesser = accept_and_submit(
        emulator.state, hit_id, "A1NOSESSION", {"verificationCode": good.verification_code}
    )

    report = assignments.sync(ctx)
    found = {a.worker_id: a for a in report.assignments}
    assert found["A1GOODWRITER"].session["session_id"] == good.session_id
    assert (
        found["A1GOODWRITER"].submitted_code == good.verification_code
        and found["A1GOODWRITER"].problems == []
    )
    assert "does not match" in found["A1QUITTER"].problems[0]
    assert found["A1NOSESSION"].assignment_id == guesser["AssignmentId"]
    assert "no session was bound" in found["A1NOSESSION"].problems[0]
    assert len(report.problems) == 2

    proposals = {p.worker_id: p for p in review.proposals(ctx)}
    assert proposals["A1GOODWRITER"].decision == "approve"
    assert proposals["A1NOAIWRITER"].decision == "reject"
    assert "asked for suggestions 0 times" in proposals["A1NOAIWRITER"].feedback
    assert (
        "not finished" in proposals["A1QUITTER"].feedback
        and "verification code" in proposals["A1QUITTER"].feedback
    )
    assert proposals["A1NOSESSION"].decision == "reject"

    outcomes = review.apply(ctx, list(proposals.values()))
    assert set(outcomes.values()) == {"approved", "rejected"}
    good_view = mturk.get_assignment(AssignmentId=good.assignment_id)["Assignment"]
    assert (good_view["AssignmentStatus"], good_view["RequesterFeedback"]) == (
        "Approved",
        "Thank you for writing with us!",
    )
    lazy_view = mturk.get_assignment(AssignmentId=lazy.assignment_id)["Assignment"]
    assert (
        lazy_view["AssignmentStatus"] == "Rejected"
        and "asked for suggestions" in lazy_view["RequesterFeedback"]
    )
    assert review.apply(ctx, [proposals["A1GOODWRITER"]]) == {
        good.assignment_id: "already approved"
    }

    paid = bonuses.pay(ctx, good.assignment_id, Decimal("1.00"), "A thoughtful story")
    assert paid.status == "paid"
    assert (
        bonuses.pay(ctx, good.assignment_id, Decimal("1.00"), "A thoughtful story").status
        == "already paid"
    )

    # Emails reach the approved and rejected workers; nobody else.
    failures = workers.notify(
        ctx, ["A1GOODWRITER", "A1NOAIWRITER", "A1STRANGER"], "Thanks", "Round 2 soon."
    )
    assert list(failures) == ["A1STRANGER"]
    workers.block(ctx, "A1NOSESSION", "submitted another worker's code")
    assert [b["WorkerId"] for b in workers.blocked(ctx)] == ["A1NOSESSION"]

    assert hit_actions.expire(ctx, hit_id) == "expired"
    assignments.sync(ctx)
    assert hit_actions.delete(ctx, hit_id) == "deleted"

    with reading(ctx.engine) as connection:
        totals = budget.totals(connection, ctx.environment)
    # One approved reward (2.50 + 0.50) and one bonus (1.00 + 0.20); everything else released.
    assert (totals.paid.total, totals.committed.total) == (Decimal("4.20"), Decimal("4.20"))
    assert mturk.get_account_balance()["AvailableBalance"] == "9995.80"


def test_sync_confirms_auto_approved_rewards_and_releases_untaken_ones(
    make_ctx, emulator, task_app
):
    ctx = make_ctx(auto_approve_hours=1)
    hit_id = post_hit(ctx, assignments=3, reward="2.00")
    taken = take_hit(emulator.url, task_app.test_client(), hit_id, "A1WRITER")
    emulator.state.advance(2 * 3600)  # past the auto-approval delay
    hit_actions.expire(ctx, hit_id)
    assignments.sync(ctx)
    with reading(ctx.engine) as connection:
        rewards = ledger.entries(connection, ctx.environment, kind="reward")
    statuses = sorted((r["assignment_id"] or "-", r["status"]) for r in rewards)
    assert statuses == [("-", "cancelled"), ("-", "cancelled"), (taken.assignment_id, "confirmed")]


def test_sync_adopts_a_hit_a_crashed_post_never_recorded(ctx, emulator):
    mturk = ctx.requester.client
    mturk.create_hit(
        MaxAssignments=1,
        LifetimeInSeconds=3600,
        AssignmentDurationInSeconds=600,
        Reward="1.00",
        Title="t",
        Description="d",
        Question=hits.external_question(TASK_URL),
        RequesterAnnotation=f"{ctx.study.id}-0123456789abcdef01234567",
    )
    mturk.create_hit(
        MaxAssignments=1,
        LifetimeInSeconds=3600,
        AssignmentDurationInSeconds=600,
        Reward="1.00",
        Title="t",
        Description="d",
        Question=hits.external_question(TASK_URL),
        RequesterAnnotation="another-study-0123",
    )
    report = assignments.sync(ctx)
    assert len(report.adopted_hits) == 1
    assert [r["hit_id"] for r in hits.study_hits(ctx, refresh=False)] == report.adopted_hits


def test_sync_reports_sessions_whose_assignment_never_arrived(ctx, emulator, task_app):
    hit_id = post_hit(ctx, assignments=2, reward="2.50")
    unsent = take_hit(emulator.url, task_app.test_client(), hit_id, "A1FORGOT", submit=False)
    report = assignments.sync(ctx)
    assert [s["session_id"] for s in report.sessions_without_assignment] == [unsent.session_id]
    assert "has no submitted assignment on MTurk" in report.problems[0]


def test_sync_records_rewards_mturk_owes_even_past_the_cap(make_ctx, emulator, task_app):
    from tests.mturk.conftest import connect

    live = make_ctx(account=connect(emulator.url, live=True), budget="3.00")
    hit_id = post_hit(live, assignments=1, reward="2.50")
    # Someone adds an assignment on the requester website, outside the budget.
    live.requester.client.create_additional_assignments_for_hit(
        HITId=hit_id, NumberOfAdditionalAssignments=1
    )
    for worker in ("A1FIRST", "A1SECOND"):
        accept_and_submit(emulator.state, hit_id, worker, {"verificationCode": "X"})
    assignments.sync(live)
    with reading(live.engine) as connection:
        rewards = ledger.entries(connection, live.environment, kind="reward")
        committed = budget.totals(connection, live.environment).committed
    assert sorted(r["worker_id"] for r in rewards) == ["A1FIRST", "A1SECOND"]
    assert committed.total == Decimal(
        "6.00"
    )  # over the $3.00 cap: recorded, because MTurk will pay it


def test_a_judging_hit_sync_adopts_is_left_to_the_judging_review(ctx, emulator):
    # A judging HIT this database never saw (a crash before its row, or a rebuilt database):
    # its judge must not be proposed for rejection as a writer without a session.
    judge_url = "https://study.example.org/judge"
    ctx.requester.client.create_hit(
        MaxAssignments=1,
        LifetimeInSeconds=3600,
        AssignmentDurationInSeconds=600,
        Reward="1.00",
        Title="Rate texts",
        Description="d",
        Question=hits.external_question(judge_url),
        RequesterAnnotation=f"{ctx.study.id}-0123456789abcdef01234567",
    )
    (hit_id,) = emulator.state.data["hits"]
    judge = accept_and_submit(emulator.state, hit_id, "A1JUDGE", {"verificationCode": "J1"})
    report = assignments.sync(ctx)
    assert report.adopted_hits == [hit_id]
    assert judge["AssignmentId"] not in {p.assignment_id for p in review.proposals(ctx)}
    (row,) = hits.study_hits(ctx, refresh=False)
    assert row["task_url"] == judge_url and hits.is_judging(row)


def test_sync_after_a_hit_is_deleted_does_not_report_its_writers_as_missing(
    ctx, emulator, task_app
):
    hit_id = post_hit(ctx, assignments=1, reward="2.50")
    writer = take_hit(emulator.url, task_app.test_client(), hit_id, "A1WRITER", ai_requests=2)
    assert assignments.sync(ctx).problems == []
    assert review.approve(ctx, writer.assignment_id, "Thanks!") == "approved"
    assert hit_actions.delete(ctx, hit_id) == "deleted"
    # The study is done and its HIT deleted; a later sync (before a release) finds nothing wrong.
    assert assignments.sync(ctx).problems == []
