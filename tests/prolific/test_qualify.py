"""A qualification round on Prolific gates the main round on Prolific: writers take the
qualification study, reviewers rate, `study prolific qualify` (or the top-level `study qualify`,
which finds the provider the round ran on) pays and fills the qualified group, and the main
round's study admits only that group (on Prolific and on the server)."""

from __future__ import annotations

import httpx
import pytest
from click.testing import CliRunner

from study.cli import main
from study.prolific import groups, qualify, studies, submissions
from study.review import qualify as shared
from study.review import ratings as rating_store
from study.review import submissions as review_submissions
from study.store import sessions as session_store
from study.store import writing
from study.store.mturk import mturk_assignments
from tests.prolific.conftest import TASK_URL, with_prolific
from tests.prolific.walk import take_part
from tests.review.conftest import ROUNDS, add_reviewer, set_sections

GOOD, SPAM = "a1" * 12, "b2" * 12


@pytest.fixture
def study_folder(study_folder):
    set_sections(study_folder, rounds=ROUNDS, review={"ratings_per_submission": 2})
    return study_folder


def draft(ctx, round_name):
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL, round_name))
    studies.publish(ctx, made["study_id"])
    return made


def test_the_qualification_round_gates_the_main_round_through_the_qualified_group(ctx, prolific, task_client):
    first = draft(ctx, "qualification")
    assert "round=qualification&PROLIFIC_PID=" in first["task_url"]
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    with pytest.raises(studies.StudyError, match="nobody has qualified yet.*study prolific qualify"):
        draft(ctx, "main")

    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        review_submissions.collect(connection, ctx.study)
        by_session = {s["session_id"]: s["submission_id"] for s in review_submissions.all_submissions(connection)}
        for pid, score in ((GOOD, 5), (SPAM, 1)):
            for reviewer in (ana, ben):
                rating_store.rate(connection, by_session[taken[pid].session_id], reviewer, score, "",
                                  scores=(1, 2, 3, 4, 5))  # fmt: skip

    report = qualify.qualify(ctx)
    assert report.added == [(GOOD, 5)] and len(report.paid) == 1  # the spam scored below pay_min_score
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "AWAITING REVIEW"}
    again = qualify.qualify(ctx)
    assert again.added == [] and again.paid == []  # nobody paid or added twice

    main = draft(ctx, "main")
    (allow,) = ctx.client.get(f"studies/{main['study_id']}/")["filters"]
    assert allow == {"filter_id": "participant_group_allowlist",
                     "selected_values": [groups.find(ctx, "qualified")]}  # fmt: skip
    refused = httpx.post(prolific.url + "/_emulator/take-part",
                         json={"study_id": main["study_id"], "participant_id": SPAM})  # fmt: skip
    assert refused.status_code == 409
    # The server refuses them too, should they come by another way.
    door = task_client.get(f"/task?round=main&PROLIFIC_PID={SPAM}&STUDY_ID={main['study_id']}"
                           "&SESSION_ID=cccccccccccccccccccccccc")  # fmt: skip
    assert door.status_code == 403
    assert take_part(prolific, task_client, main["study_id"], GOOD, finish=False).session_id


def rate(ctx, taken: dict, scores: dict) -> None:
    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        review_submissions.collect(connection, ctx.study)
        by_session = {s["session_id"]: s["submission_id"] for s in review_submissions.all_submissions(connection)}
        for pid, score in scores.items():
            for reviewer in (ana, ben):
                rating_store.rate(connection, by_session[taken[pid].session_id], reviewer, score, "",
                                  scores=(1, 2, 3, 4, 5))  # fmt: skip


def test_study_qualify_runs_prolifics_qualify_for_a_round_run_on_prolific(ctx, prolific, task_client, study_folder):
    with_prolific(study_folder, task_url=TASK_URL, budget="1000.00")
    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5, SPAM: 1})

    done = CliRunner().invoke(main, ["qualify", str(study_folder)])  # only Prolific's submissions
    assert done.exit_code == 0, done.output
    assert "Qualified group: 1 added, 0 removed." in done.output
    assert set(groups.members(ctx, "qualified")) == {GOOD}
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "AWAITING REVIEW"}

    # `study status` shows Prolific's synced submissions and money against [prolific] budget.
    status = CliRunner().invoke(main, ["status", str(study_folder)])
    assert status.exit_code == 0, status.output
    (line,) = [line for line in status.output.splitlines() if line.startswith("Prolific (prolific:")]
    # Two places of 2.50 reserved with Prolific's fee (0.83 each), the approved one paid, in the
    # emulated workspace's dollars, which every entry records.
    assert line.endswith(": 2 synced submissions awaiting review or approved; committed $6.66 of a $1000.00 cap, paid $3.33")

    # With MTurk's submissions in the same database, the researcher says which round is meant.
    with writing(ctx.engine) as connection:
        session = session_store.create(connection, worker_id="A1WORKER", assignment_id="ASSIGN1", hit_id="HIT1")
        connection.execute(mturk_assignments.insert().values(
            environment="sandbox:000000000000", assignment_id="ASSIGN1", hit_id="HIT1",
            worker_id="A1WORKER", status="Submitted", session_id=session["session_id"], synced_at=0.0))  # fmt: skip
    assert {c.worker_id: c.provider for c in shared.candidates(ctx)} == {GOOD: "prolific", SPAM: "prolific"}
    both = CliRunner().invoke(main, ["qualify", str(study_folder)])
    assert both.exit_code == 1
    assert "submissions from mturk and prolific" in both.output and "--provider" in both.output
    again = CliRunner().invoke(main, ["qualify", str(study_folder), "--provider", "prolific"])
    assert again.exit_code == 0, again.output
    assert "Qualified group: 0 added, 0 removed." in again.output  # nobody added or paid twice
    assert not any(line.startswith("paid ") for line in again.output.splitlines())


def test_a_writer_who_still_passes_with_another_submission_stays_in_the_qualified_group(
    make_ctx, prolific, study_folder, model_url
):
    """Without [[rounds]] every finished session is reviewed and a participant may take part in
    two of the study's Prolific studies; one passed submission keeps them qualified, as the
    task server's own check (study.review.decisions.writer_passed) reads it."""
    import tomllib
    from dataclasses import replace

    import tomli_w

    from study.review import decisions
    from study.server import create_app

    path = study_folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data.pop("rounds")
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    ctx = make_ctx(budget="1000.00")
    study = replace(ctx.study, suggestions=replace(ctx.study.suggestions, endpoint=model_url))
    task_client = create_app(study, engine=ctx.engine).test_client()
    taken = {}
    for name in ("first", "second"):
        made = draft(ctx, None)
        taken[name] = take_part(prolific, task_client, made["study_id"], GOOD)
    submissions.sync(ctx)
    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        review_submissions.collect(connection, ctx.study)
        by_session = {s["session_id"]: s["submission_id"] for s in review_submissions.all_submissions(connection)}
        for name, score in (("first", 5), ("second", 2)):
            for reviewer in (ana, ben):
                rating_store.rate(connection, by_session[taken[name].session_id], reviewer, score, "",
                                  scores=(1, 2, 3, 4, 5))  # fmt: skip
        assert decisions.writer_passed(connection, ctx.study, None, worker_id=GOOD)
    report = qualify.qualify(ctx, pay=False)
    assert report.removed == []
    assert groups.members(ctx, "qualified") == {GOOD: 5}
    again = qualify.qualify(ctx, pay=False)
    assert again.added == [] and again.removed == []
    assert groups.members(ctx, "qualified") == {GOOD: 5}


def test_live_qualify_shows_the_cost_and_pays_nothing_until_confirmed(ctx, prolific, task_client, study_folder,
                                                                      monkeypatch):  # fmt: skip
    from study.prolific.context import Context

    with_prolific(study_folder, task_url=TASK_URL, budget="1000.00")
    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5, SPAM: 1})
    # Only the "is this Prolific itself" answer is forced: the calls still go to the emulator.
    monkeypatch.setattr(Context, "live", property(lambda self: True))

    declined = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder), "--live"], input="n\n")
    assert "LIVE: paying the qualification round's submissions will cost up to $3.33" in declined.output
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "AWAITING REVIEW", SPAM: "AWAITING REVIEW"}

    agreed = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder), "--live"], input="y\n")
    assert agreed.exit_code == 0, agreed.output
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "AWAITING REVIEW"}


def test_qualify_pays_and_admits_only_the_participant_prolific_says_took_part(ctx, prolific, task_client):
    """The study URL's PROLIFIC_PID is whatever the browser sends: a participant who took part
    as EVE and opened the task as FRIEND wrote a session Prolific knows as EVE's."""
    eve, friend = "e5" * 12, "f6" * 12
    first = draft(ctx, "qualification")
    taken = {eve: take_part(prolific, task_client, first["study_id"], eve, opened_as=friend)}
    submissions.sync(ctx)
    rate(ctx, taken, {eve: 5})

    report = qualify.qualify(ctx)
    assert report.added == [] and report.paid == []  # FRIEND did nothing; EVE's session says FRIEND
    assert [why for _, why in report.skipped] == [
        f"Prolific says submission {taken[eve].submission_id} was made by participant {eve}, not "
        f"by {friend}, whom the session was opened for; `study prolific review` rejects it"
    ]
    assert groups.members(ctx, "qualified") == {}
    (status,) = [s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")]
    assert status == "AWAITING REVIEW"  # left to `study prolific review`


def test_qualify_lists_the_submissions_it_does_not_pay_that_still_await_review(
    ctx, prolific, task_client, study_folder
):
    """As MTurk's qualify does: a submission scored below pay_min_score is not approved here,
    but it is not decided either; the researcher is told which, and how to decide them."""
    with_prolific(study_folder, task_url=TASK_URL, budget="1000.00")
    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5, SPAM: 1})
    spam_id = taken[SPAM].submission_id

    done = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder)])
    assert done.exit_code == 0, done.output
    (line,) = [line for line in done.output.splitlines() if "not paid" in line]
    assert line.endswith(f": not paid, scored 1, below pay_min_score 2 (Prolific submission {spam_id})")
    assert (
        "Not paid here is not decided: 1 submission(s) above are still AWAITING REVIEW on Prolific, "
        "which pays a submission once it is approved (this study's completion code asks Prolific "
        f"for a manual review). Fix: study prolific reject {study_folder} {spam_id} --message TEXT "
        "--category CATEGORY (or approve them)."
    ) in done.output

    why = "The text has fewer words than the task asked for, and the reviewers rated it as spam. " * 2
    rejected = CliRunner().invoke(main, ["prolific", "reject", str(study_folder), spam_id,
                                         "--message", why, "--category", "LOW_EFFORT"])  # fmt: skip
    assert rejected.exit_code == 0, rejected.output
    again = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder)])
    assert again.exit_code == 0, again.output
    assert "not paid" not in again.output and "Not paid here" not in again.output
    assert not any(line.startswith("paid ") for line in again.output.splitlines())  # nobody twice
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "REJECTED"}


def test_a_participant_who_withdrew_is_paid_but_not_added_to_the_qualified_group(ctx, prolific, task_client, study_folder):
    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5, SPAM: 5})
    withdrawn = CliRunner().invoke(main, ["withdraw", SPAM, "--study", str(study_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output

    report = qualify.qualify(ctx)

    assert report.added == [(GOOD, 5)]
    assert [note.split(" (")[0] for _, note in report.withdrew] == ["paid, not qualified: withdrew"]
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "APPROVED"}  # both paid for the work


def test_a_withdrawn_participants_unrated_submission_is_paid_once_unreviewed(ctx, prolific, task_client, study_folder):
    """Reviewers no longer read it, so it never gets an outcome: qualify pays it as passed work."""
    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5})  # SPAM's submission is not rated yet when they withdraw
    withdrawn = CliRunner().invoke(main, ["withdraw", SPAM, "--study", str(study_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output

    report = qualify.qualify(ctx)
    again = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder)])

    assert report.added == [(GOOD, 5)] and len(report.paid) == 2
    assert again.exit_code == 0, again.output
    assert not any(line.startswith("paid ") for line in again.output.splitlines())  # nobody twice
    assert ": paid, not qualified: withdrew (study withdraw --study)" in again.output
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "APPROVED"}
    assert set(groups.members(ctx, "qualified")) == {GOOD}


def test_a_participant_who_withdrew_after_qualifying_leaves_the_qualified_group_once(ctx, prolific, task_client, study_folder):
    from study.review import audit
    from study.store import reading

    first = draft(ctx, "qualification")
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    rate(ctx, taken, {GOOD: 5, SPAM: 5})
    qualify.qualify(ctx)
    group = groups.find(ctx, "qualified")
    at_prolific = lambda: {m["participant_id"] for m in ctx.client.pages(f"participant-groups/{group}/participants/")}  # noqa: E731
    assert at_prolific() == {GOOD, SPAM}
    withdrawn = CliRunner().invoke(main, ["withdraw", SPAM, "--study", str(study_folder)])
    assert withdrawn.exit_code == 0, withdrawn.output
    assert "They hold the qualification study qualify granted them (Prolific)" in withdrawn.output

    revoked = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder)])
    again = CliRunner().invoke(main, ["prolific", "qualify", str(study_folder)])

    assert revoked.exit_code == 0 and again.exit_code == 0, revoked.output + again.output
    assert "Qualified group: 0 added, 1 removed." in revoked.output
    assert ": paid, qualification revoked: withdrew (study withdraw --study)" in revoked.output
    assert "Qualified group: 0 added, 0 removed." in again.output
    assert ": paid, not qualified: withdrew (study withdraw --study)" in again.output
    assert at_prolific() == {GOOD}
    with reading(ctx.engine) as connection:  # once, and the log shows it
        logged = audit.entries(connection, actions=(audit.QUALIFY_REVOKE,))
    assert [e["detail"]["why"] for e in logged] == ["withdrew"]
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "APPROVED"}  # still paid for the work
