"""Reviewing submitted assignments: the rules, the proposals, approving and rejecting.

The rules (a proposal is "approve" only when all five hold; each failure is a reason to reject,
and the worker's feedback lists them):
  1. code matches: a session is bound to the assignment, for the same worker and HIT, and the
     verification code submitted with the HIT is that session's code (study.mturk.assignments);
  2. finished: the session reached the completion page (writing, self-evaluation and survey done);
  3. minimum time: the writer wrote for at least [session] min_seconds (paper §4.3.2: ten
     minutes), with the same few seconds of slack the task server allows;
  4. interacted with the AI: the writer asked for suggestions (pressing Tab) at least [mturk]
     min_ai_requests times (default 1). App. D: writers who did not interact with the system
     were disqualified. What counts is the task server's own record of suggestion requests
     (suggestion_requests, written before the model is called), not `suggestion-get` events,
     which the browser sends and a script can make up; requests count rather than suggestions
     shown, so a writer is not rejected because our model endpoint failed;
  5. wrote: the text holds at least [mturk] min_writer_chars characters (default 100) that the
     writer typed and kept, by the replay's authorship (study.curation.replay); on a paradigm's
     own path, what that path counts (a chat study's worker writes by talking: their messages;
     study.review.evidence).
Beside the rules, a proposal carries flags that decide nothing by themselves: with [session]
outside_paste = "flag" or "refuse", every insert of text from outside the study
(study.curation.origin), so the researcher can keep or drop the session knowingly; and that
the writer withdrew (`study withdraw --study`): their session leaves the study's data, but the
HIT they submitted is decided by the same rules and paid once, as anyone's.
`review` shows every proposal and applies them only after confirmation; approve and reject also
work one assignment at a time. Approving confirms the assignment's reward in the ledger;
rejecting cancels it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import update

from study import control_arm
from study.config_texts import MIN_TIME_SLACK_SECONDS
from study.mturk import assignments as assignment_module
from study.mturk import hits as hit_module
from study.mturk import budget, ledger, money
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.review import evidence as review_evidence
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.mturk import mturk_assignments

REJECT_INTRO = "Sorry, we could not approve this HIT:"


@dataclass
class Proposal:
    assignment_id: str
    worker_id: str
    session_id: str | None
    decision: str  # approve | reject
    reasons: list[str] = field(default_factory=list)
    feedback: str = ""
    # For the researcher, never the worker: what the log says about where the text came from.
    flags: list[str] = field(default_factory=list)


def propose(
    assignment: dict,
    session: dict | None,
    ai_requests: int,
    *,
    min_seconds: int,
    min_ai_requests: int,
    approve_feedback: str,
    writer_chars: int = 0,
    min_writer_chars: int = 0,
    own_path: bool = False,
    assistant: bool = True,
) -> Proposal:
    """The decision for one submitted assignment (a row of mturk_assignments). Pure.
    `assistant`: False for a control arm's session, whose writer had no AI to ask."""
    reasons = []
    mturk_view = {
        "WorkerId": assignment["worker_id"],
        "HITId": assignment["hit_id"],
        "Answer": assignment["answer"],
    }
    problems = assignment_module.reconcile(mturk_view, session)
    if problems:
        reasons.append(
            "the verification code does not match our records (" + "; ".join(problems) + ")"
        )
    if session is not None:
        reasons += session_reasons(
            session,
            ai_requests,
            min_seconds=min_seconds,
            min_ai_requests=min_ai_requests,
            writer_chars=writer_chars,
            min_writer_chars=min_writer_chars,
            own_path=own_path,
            assistant=assistant,
        )
    session_id = session["session_id"] if session else None
    if reasons:
        return Proposal(
            assignment["assignment_id"],
            assignment["worker_id"],
            session_id,
            "reject",
            reasons,
            f"{REJECT_INTRO} " + "; ".join(reasons) + ".",
        )
    return Proposal(
        assignment["assignment_id"],
        assignment["worker_id"],
        session_id,
        "approve",
        [],
        approve_feedback,
    )


def session_reasons(
    session: dict,
    ai_requests: int,
    *,
    min_seconds: int,
    min_ai_requests: int,
    writer_chars: int = 0,
    min_writer_chars: int = 0,
    own_path: bool = False,
    assistant: bool = True,
) -> list[str]:
    """Rules 2-5 for one session, whichever provider brought the writer (study.prolific.review
    applies them to Prolific's submissions). Pure."""
    found = []
    if session["stage"] != "complete":
        found.append(
            f"the session was not finished (it stopped at the {session['stage']} step)"
        )
    started, finished = session["writing_started_at"], session["writing_finished_at"]
    if started is None or finished is None:
        if session["stage"] == "complete":
            found.append("no writing time was recorded")
    elif finished - started + MIN_TIME_SLACK_SECONDS < min_seconds:
        found.append(
            f"the writing took {int(finished - started)} seconds, less than the required {min_seconds}"
        )
    if assistant and ai_requests < min_ai_requests:
        found.append(
            f"the AI was asked for suggestions {ai_requests} times, "
            f"fewer than the required {min_ai_requests}"
        )
    if writer_chars < min_writer_chars:
        held = "the worker's messages hold" if own_path else "the text holds"
        written = "" if own_path else " written by the worker"
        found.append(
            f"{held} {writer_chars} characters{written}, fewer than the required {min_writer_chars}"
        )
    return found


def proposals(ctx: Context) -> list[Proposal]:
    """A proposal for every assignment `sync` last saw as Submitted."""
    found = []
    no_assistant = control_arm.control_names(ctx.study.conditions)
    # Judges' assignments have no writing session; `study judging review` decides them.
    judging = {r["hit_id"] for r in hit_module.rows(ctx) if hit_module.is_judging(r)}
    with reading(ctx.engine) as connection:
        for assignment in assignment_module.stored(ctx, status="Submitted"):
            if assignment["hit_id"] in judging:
                continue
            session = session_store.by_assignment(connection, assignment["assignment_id"])
            seen = review_evidence.gather(connection, ctx.study, session)
            proposal = propose(
                    assignment,
                    session,
                    seen.ai_requests,
                    min_seconds=ctx.study.min_seconds,
                    min_ai_requests=ctx.settings.min_ai_requests,
                    assistant=not (session and session["condition"] in no_assistant),
                    approve_feedback=ctx.settings.approve_feedback,
                    writer_chars=seen.written,
                    min_writer_chars=ctx.settings.min_writer_chars,
                    own_path=seen.own_path,
                )
            proposal.flags = seen.flags
            found.append(proposal)
    return found


def approval_cost(ctx: Context, assignment_ids: list[str]) -> money.Cost:
    """What approving these assignments takes from the account."""
    total = money.ZERO
    for assignment_id in assignment_ids:
        with reading(ctx.engine) as connection:
            entry = ledger.reward_entry(connection, ctx.environment, assignment_id)
        if entry is None:  # not synced yet: MTurk says what the HIT pays
            assignment, hit = assignment_module.fetch(ctx, assignment_id)
            if assignment["AssignmentStatus"] != "Approved":
                reward = Decimal(hit["Reward"])
                total += money.Cost(reward, money.fee(reward, assignments=hit["MaxAssignments"]))
        elif entry["status"] != "confirmed":
            total += money.Cost(Decimal(entry["amount"]), Decimal(entry["fee"]))
    return total


def approve(
    ctx: Context,
    assignment_id: str,
    feedback: str | None = None,
    *,
    override_rejection: bool = False,
) -> str:
    """Approve and pay the reward. Safe to re-run: an assignment already approved is confirmed
    in the ledger instead of failing."""
    assignment, hit = assignment_module.fetch(ctx, assignment_id)
    if assignment["AssignmentStatus"] == "Rejected" and not override_rejection:
        raise ValueError(
            f"Assignment {assignment_id} was rejected; approving it needs --override-rejection."
        )
    # Already approved on MTurk (on the website, or automatically): paid, so recorded as paid
    # whatever the cap says, as `sync` records it.
    paid_already = assignment["AssignmentStatus"] == "Approved"
    with writing(ctx.engine) as connection:
        entry = _bind_reward(connection, ctx, assignment, hit, budget=None if paid_already else ctx.budget)
        if not paid_already:
            try:
                ledger.reserve(
                    connection,
                    ctx.environment,
                    entry,
                    ctx.budget,
                    f"approving assignment {assignment_id}, which no reservation covered",
                )
            except budget.BudgetExceeded as refusal:
                raise budget.BudgetExceeded(f"{refusal} {_pays_itself(assignment)}") from None
        reopened = entry["status"] == "cancelled"
        if reopened and not paid_already:
            budget.check_budget(
                connection,
                ctx.environment,
                ctx.budget,
                money.Cost(Decimal(entry["amount"]), Decimal(entry["fee"])),
                f"approving rejected assignment {assignment_id}",
            )
        if reopened:  # approving a rejection: the reward is due again
            # The note replaces "rejected", which `study mturk ledger` would otherwise print
            # after the paid reward: a rejected assignment paid, to whoever audits the books.
            ledger.settle(connection, entry["id"], "intended",
                          "rejected, then approved with --override-rejection")  # fmt: skip
    if paid_already:
        outcome = "already approved"
    else:
        params = {"AssignmentId": assignment_id}
        if feedback:
            params["RequesterFeedback"] = feedback
        if override_rejection:
            params["OverrideRejection"] = True
        try:
            ctx.requester.call("ApproveAssignment", **params)
            outcome = "approved"
        except MTurkError:
            if _status(ctx, assignment_id) != "Approved":
                if reopened:
                    with writing(ctx.engine) as connection:
                        ledger.settle(connection, entry["id"], "cancelled", "still rejected")
                raise
            outcome = "already approved"
    with writing(ctx.engine) as connection:
        ledger.confirm(connection, entry["id"])
        _set_status(connection, ctx, assignment_id, "Approved", feedback)
    return outcome


def _pays_itself(assignment: dict) -> str:
    """Refusing to approve work already done spends nothing for long: MTurk approves a
    submission by itself when its auto-approval time comes, cap or not."""
    when = assignment.get("AutoApprovalTime")
    at = (
        f"at {hit_module.utc_text(when)}"
        if when is not None
        else "after [mturk] auto_approve_hours"
    )
    return (
        f"The work is done, though: unless it is rejected (only if it breaks the review rules), "
        f"MTurk approves and pays it by itself {at}, whatever the cap says."
    )


def reject(ctx: Context, assignment_id: str, feedback: str) -> str:
    """Reject with feedback the worker sees (MTurk requires it). Safe to re-run."""
    if not feedback.strip():
        raise ValueError("A rejection needs feedback telling the worker why.")
    assignment, hit = assignment_module.fetch(ctx, assignment_id)
    if assignment["AssignmentStatus"] == "Approved":
        raise ValueError(_too_late_to_reject(ctx, assignment))
    outcome = "already rejected"
    if assignment["AssignmentStatus"] == "Submitted":
        try:
            ctx.requester.call(
                "RejectAssignment", AssignmentId=assignment_id, RequesterFeedback=feedback
            )
            outcome = "rejected"
        except MTurkError:
            if _status(ctx, assignment_id) != "Rejected":
                raise
    with writing(ctx.engine) as connection:
        entry = _bind_reward(connection, ctx, assignment, hit, budget=None)
        ledger.settle(connection, entry["id"], "cancelled", "rejected")
        _set_status(connection, ctx, assignment_id, "Rejected", feedback)
    return outcome


def _too_late_to_reject(ctx: Context, assignment: dict) -> str:
    """Why an approved assignment cannot be rejected, and what is left to do. Nobody can approve
    a submission after its auto-approval time, since MTurk has approved it by then: an approval
    at or after that time is MTurk's own."""
    assignment_id = assignment["AssignmentId"]
    approved, due = assignment.get("ApprovalTime"), assignment.get("AutoApprovalTime")
    if approved is None or due is None or hit_module.epoch(approved) < hit_module.epoch(due):
        return (
            f"Assignment {assignment_id} is already approved (paid); MTurk cannot reject an "
            "approved assignment."
        )
    return (
        f"Assignment {assignment_id} was auto-approved: nobody decided it before its "
        f"auto-approval time, so MTurk approved and paid it by itself at {hit_module.utc_text(approved)}. "
        "A rejection is no longer possible and the payment cannot be taken back. Fix: none for "
        "this assignment (if its work broke the review rules, `study mturk block "
        f"{ctx.study.directory} {assignment['WorkerId']} --reason TEXT` keeps the worker from "
        "your other HITs); for later submissions, decide them before MTurk does (`study mturk "
        "list` says when it will), or raise [mturk] auto_approve_hours for HITs posted from now on."
    )


def _bind_reward(connection, ctx: Context, assignment: dict, hit: dict, *, budget) -> dict:
    """The ledger's reward entry for this assignment (see ledger.bind_reward)."""
    return ledger.bind_reward(
        connection,
        ctx.environment,
        hit_id=hit["HITId"],
        assignment_id=assignment["AssignmentId"],
        worker_id=assignment["WorkerId"],
        reward=Decimal(hit["Reward"]),
        max_assignments=hit["MaxAssignments"],
        budget=budget,
    )


def apply(ctx: Context, chosen: list[Proposal]) -> dict[str, str]:
    """Carry out proposals; returns assignment id -> outcome (or the error, and goes on)."""
    outcomes = {}
    for proposal in chosen:
        try:
            if proposal.decision == "approve":
                outcomes[proposal.assignment_id] = approve(
                    ctx, proposal.assignment_id, proposal.feedback
                )
            else:
                outcomes[proposal.assignment_id] = reject(
                    ctx, proposal.assignment_id, proposal.feedback
                )
        except (MTurkError, budget.BudgetExceeded, ValueError) as error:
            outcomes[proposal.assignment_id] = f"failed: {error}"
    return outcomes


def _status(ctx: Context, assignment_id: str) -> str:
    return ctx.requester.call("GetAssignment", AssignmentId=assignment_id)["Assignment"][
        "AssignmentStatus"
    ]


def _set_status(
    connection, ctx: Context, assignment_id: str, status: str, feedback: str | None
) -> None:
    connection.execute(
        update(mturk_assignments)
        .where(
            mturk_assignments.c.environment == ctx.environment,
            mturk_assignments.c.assignment_id == assignment_id,
        )
        .values(status=status, requester_feedback=feedback)
    )
