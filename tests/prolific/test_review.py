"""Reviewing Prolific submissions by MTurk's rules, approving and rejecting on Prolific, and the
books following along."""

from __future__ import annotations

import pytest

from study import providers
from study.prolific import ledger, review, studies, submissions
from study.store import reading
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part


@pytest.fixture
def study_id(ctx) -> str:
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 3, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    return made["study_id"]


def test_review_approves_a_good_session_and_rejects_one_that_never_asked_the_ai(ctx, prolific, task_client, study_id):
    good = take_part(prolific, task_client, study_id, "a" * 24)
    idle = take_part(prolific, task_client, study_id, "b" * 24, ai_requests=0)
    submissions.sync(ctx)
    proposals = {p.submission_id: p for p in review.proposals(ctx)}
    assert proposals[good.submission_id].decision == "approve"
    rejected = proposals[idle.submission_id]
    assert rejected.decision == "reject" and rejected.category == "LOW_EFFORT"
    assert "asked for suggestions 0 times, fewer than the required 1" in rejected.message
    assert len(rejected.message) >= review.MIN_MESSAGE
    assert review.apply(ctx, list(proposals.values())) == {
        good.submission_id: "approved", idle.submission_id: "rejected"}
    statuses = {s["id"]: s["status"] for s in ctx.client.pages(f"studies/{study_id}/submissions/")}
    assert statuses == {good.submission_id: "APPROVED", idle.submission_id: "REJECTED"}
    with reading(ctx.engine) as connection:
        totals = ledger.totals(connection, ctx.environment, ctx.currency)
        # Charged: one reward; reserved: the rejected place, which Prolific offers again, and
        # the untaken one.
        assert totals.charged.pay == 250 and totals.reserved.pay == 500
        assert len(ledger.open_places(connection, ctx.environment, study_id)) == 2
    assert review.approve(ctx, good.submission_id) == "already approved"
    with reading(ctx.engine) as connection:
        assert ledger.totals(connection, ctx.environment, ctx.currency).charged.pay == 250


def test_a_session_the_participant_did_not_finish_is_rejected_with_the_rule_it_failed(ctx, prolific, task_client, study_id):
    unfinished = take_part(prolific, task_client, study_id, "c" * 24, finish=False)
    # They go back to Prolific with the code they found elsewhere, without finishing.
    import httpx

    code = studies.row(ctx, study_id)["completion_code"]
    httpx.get(f"{prolific.url}/submissions/complete?cc={code}&participant_id={'c' * 24}")
    submissions.sync(ctx)
    (proposal,) = review.proposals(ctx)
    assert proposal.submission_id == unfinished.submission_id
    assert proposal.decision == "reject"
    assert any("not finished (it stopped at the consent step)" in r for r in proposal.reasons)


def test_a_rejection_needs_prolifics_category_and_a_message_of_100_characters(ctx, prolific, task_client, study_id):
    took = take_part(prolific, task_client, study_id, "d" * 24)
    submissions.sync(ctx)
    with pytest.raises(ValueError, match="--message has 9 characters; Prolific needs at least 100"):
        review.reject(ctx, took.submission_id, "too short", "LOW_EFFORT")
    with pytest.raises(ValueError, match="--category 'LAZY' is not one of Prolific's"):
        review.reject(ctx, took.submission_id, "x" * 120, "LAZY")
    assert ctx.client.get(f"submissions/{took.submission_id}/")["status"] == "AWAITING REVIEW"


def test_only_synced_prolific_sessions_count_as_participants_for_releases(ctx, prolific, task_client, study_id):
    took = take_part(prolific, task_client, study_id, "e" * 24)
    with reading(ctx.engine) as connection:
        assert took.session_id not in providers.counted_session_ids(connection, None)
    submissions.sync(ctx)
    with reading(ctx.engine) as connection:
        assert took.session_id in providers.counted_session_ids(connection, None)


def test_a_submission_on_a_place_added_outside_the_tool_is_reserved_under_the_cap_before_approval(make_ctx, prolific, model_url):
    from dataclasses import replace

    from study.server import create_app

    ctx = make_ctx(budget="6.00")
    client = create_app(replace(ctx.study, suggestions=replace(ctx.study.suggestions, endpoint=model_url)),
                        engine=ctx.engine).test_client()  # fmt: skip
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 1, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])  # 2.50 + 0.83 fee reserved
    ctx.client.patch(f"studies/{made['study_id']}/", {"total_available_places": 2})  # on the website
    first = take_part(prolific, client, made["study_id"], "f1" * 12)
    second = take_part(prolific, client, made["study_id"], "f2" * 12)
    submissions.sync(ctx)
    with reading(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, second.submission_id)
        assert entry["status"] == "unreserved"  # counted as committed: Prolific may pay it
        assert ledger.totals(connection, ctx.environment, ctx.currency).committed.total == 666
    assert review.approve(ctx, first.submission_id) == "approved"
    with pytest.raises(ledger.BudgetExceeded, match="which no reservation covered"):
        review.approve(ctx, second.submission_id)
    assert ctx.client.get(f"submissions/{second.submission_id}/")["status"] == "AWAITING REVIEW"


def test_prolific_decisions_reach_the_report_funnel_and_the_preregistrations_exclusions(
    ctx, prolific, task_client, study_id, study_folder
):
    from study.plan import deviations
    from study.report import data as report_data

    good = take_part(prolific, task_client, study_id, "d" * 24)
    idle = take_part(prolific, task_client, study_id, "e" * 24, ai_requests=0)
    submissions.sync(ctx)
    review.apply(ctx, review.proposals(ctx))

    with reading(ctx.engine) as connection:
        excluded = deviations.exclusions(connection, {"recorded_at": "2026-01-01T00:00:00Z"})
    assert excluded["rejected at Prolific review"] == 1
    assert excluded["rejected at MTurk review"] == 0
    funnel = dict(report_data.load(study_folder).funnel)
    assert funnel["approved on Prolific"] == 1
    assert "approved on MTurk" not in funnel
    assert {good.submission_id, idle.submission_id} <= {
        s["id"] for s in ctx.client.pages(f"studies/{study_id}/submissions/")}


def test_a_place_re_offered_after_a_rejection_does_not_book_its_next_submission_as_rejected(ctx, prolific, task_client, study_id):
    # The ledger's note is what `study prolific ledger` prints after an entry: an auditor must
    # not read the next participant's approved reward as a rejected submission paid.
    idle = take_part(prolific, task_client, study_id, "f" * 24, ai_requests=0)
    submissions.sync(ctx)
    review.reject(ctx, idle.submission_id, "x" * 120, "LOW_EFFORT")
    with reading(ctx.engine) as connection:
        freed = ledger.open_places(connection, ctx.environment, study_id)
    assert [p["note"] for p in freed] == ["re-offered: rejected", None, None]
    later = [take_part(prolific, task_client, study_id, pid * 24) for pid in "gh"]
    submissions.sync(ctx)
    for took in later:
        assert review.approve(ctx, took.submission_id) == "approved"
    with reading(ctx.engine) as connection:
        paid = [ledger.reward_entry(connection, ctx.environment, t.submission_id) for t in later]
    assert [(p["status"], p["note"]) for p in paid] == [("confirmed", None), ("confirmed", None)]
