"""Reviewing Prolific submissions with the same rules as MTurk's assignments.

Rule 1 on Prolific: the submission is bound to a session of the same participant and Prolific
study, and came back with the study's completion code (study.prolific.submissions.reconcile).
Rules 2-5 (finished, minimum writing time, asked the AI, wrote enough) are MTurk's own
function, study.mturk.review.session_reasons, fed from the task server's records: suggestion
requests it made, never the browser's `suggestion-get` events.

Prolific needs a category and a message of at least 100 characters with every rejection; the
category follows the first failed rule. A participant who withdrew (`study withdraw --study`)
is reviewed as anyone, and paid once for work that meets the rules; their proposal says so. Approving confirms the reward entry in the ledger (and
reserves it first under the cap when no reservation covered it); rejecting frees the place,
which Prolific offers again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from study.mturk import review as shared_rules
from study import control_arm
from study.prolific import ledger, money, studies, submissions
from study.prolific.client import ProlificError
from study.prolific.context import Context
from study.review import evidence as review_evidence
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.prolific import prolific_submissions

REJECT_INTRO = "Sorry, we could not approve this submission:"
REJECT_OUTRO = (
    " If you think this is a mistake, please message us through Prolific and tell us what "
    "happened."
)
MIN_MESSAGE = 100  # Prolific refuses a rejection message shorter than this
CATEGORIES = (
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
)  # fmt: skip


@dataclass
class Proposal:
    submission_id: str
    participant_id: str
    session_id: str | None
    decision: str  # approve | reject
    reasons: list[str] = field(default_factory=list)
    message: str = ""
    category: str = ""
    flags: list[str] = field(default_factory=list)


def category(reasons: list[str]) -> str:
    first = reasons[0] if reasons else ""
    if "no completion code" in first:
        return "NO_CODE"
    if "completion code" in first:
        return "BAD_CODE"
    if "no session" in first:
        return "NO_DATA"
    if "seconds, less than" in first:
        return "TOO_QUICKLY"
    if "not finished" in first or "stopped at" in first:
        return "FAILED_INSTRUCTIONS"
    return "LOW_EFFORT"


def rejection_message(reasons: list[str]) -> str:
    return f"{REJECT_INTRO} " + "; ".join(reasons) + "." + REJECT_OUTRO


def propose_one(ctx: Context, submission: dict, session: dict | None, completion_code: str,
                seen: review_evidence.Evidence) -> Proposal:  # fmt: skip
    reasons = submissions.reconcile(submission, session, completion_code)
    reasons = [r for r in reasons if "stopped at" not in r]  # rule 2 says it below
    if session is not None:
        reasons += shared_rules.session_reasons(
            session,
            seen.ai_requests,
            min_seconds=ctx.study.min_seconds,
            min_ai_requests=ctx.settings.min_ai_requests,
            writer_chars=seen.written,
            min_writer_chars=ctx.settings.min_writer_chars,
            own_path=seen.own_path,
            assistant=session["condition"] not in control_arm.control_names(ctx.study.conditions),
        )
    session_id = session["session_id"] if session else None
    if reasons:
        return Proposal(submission["submission_id"], submission["participant_id"], session_id,
                        "reject", reasons, rejection_message(reasons), category(reasons), seen.flags)  # fmt: skip
    return Proposal(submission["submission_id"], submission["participant_id"], session_id,
                    "approve", flags=seen.flags)  # fmt: skip


def proposals(ctx: Context) -> list[Proposal]:
    """A proposal for every submission `sync` last saw awaiting review."""
    codes = {r["study_id"]: r["completion_code"] for r in studies.rows(ctx)}
    found = []
    with reading(ctx.engine) as connection:
        for submission in submissions.stored(ctx, status="AWAITING REVIEW"):
            session = session_store.by_assignment(connection, submission["submission_id"])
            found.append(
                propose_one(ctx, submission, session, codes.get(submission["study_id"], ""),
                            review_evidence.gather(connection, ctx.study, session))  # fmt: skip
            )
    return found


def approval_cost(ctx: Context, submission_ids: list[str]) -> money.Costs:
    """What approving these submissions pays: their reward entries not yet confirmed, each in
    the currency its place was reserved in, a total per currency."""
    due = []
    for submission_id in submission_ids:
        with reading(ctx.engine) as connection:
            entry = ledger.reward_entry(connection, ctx.environment, submission_id)
        if entry is None:  # not synced yet: stored as `sync` would, which binds it to a place
            submissions.fetch(ctx, submission_id)
            with reading(ctx.engine) as connection:
                entry = ledger.reward_entry(connection, ctx.environment, submission_id)
        if entry is not None and entry["status"] != "confirmed":
            due.append(money.Cost(entry["amount"], entry["fee"], entry["currency"]))
    return money.Costs.of(due, ctx.currency)


def approve(ctx: Context, submission_id: str) -> str:
    """Approve and pay the reward. Safe to re-run: Prolific's approval is idempotent, and an
    approved submission is confirmed in the ledger instead of approved again."""
    submission, record = submissions.fetch(ctx, submission_id)
    if submission["status"] == "APPROVED":
        outcome = "already approved"
    elif submission["status"] != "AWAITING REVIEW":
        raise ValueError(
            f"Submission {submission_id} is {submission['status']}; Prolific approves only "
            "submissions awaiting review."
        )
    else:
        with writing(ctx.engine) as connection:
            entry = ledger.reward_entry(connection, ctx.environment, submission_id)
            if entry is not None:
                ledger.reserve(connection, ctx.environment, entry, ctx.budget,
                               f"approving submission {submission_id}, which no reservation "
                               "covered")  # fmt: skip
        try:
            ctx.client.post(f"submissions/{submission_id}/transition/", {"action": "APPROVE"})
        except ProlificError:
            if ctx.client.get(f"submissions/{submission_id}/")["status"] != "APPROVED":
                raise
        outcome = "approved"
    with writing(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, submission_id)
        if entry and entry["status"] != "confirmed":
            ledger.settle(connection, entry["id"], "confirmed")
        _set_status(connection, ctx, submission_id, "APPROVED", None)
    return outcome


def reject(ctx: Context, submission_id: str, message: str, rejection_category: str) -> str:
    """Reject with a message the participant sees and one of Prolific's categories."""
    if len(message.strip()) < MIN_MESSAGE:
        raise ValueError(
            f"--message has {len(message.strip())} characters; Prolific needs at least "
            f"{MIN_MESSAGE} telling the participant why. Fix: explain which rule the "
            "submission failed."
        )
    if rejection_category not in CATEGORIES:
        raise ValueError(
            f"--category {rejection_category!r} is not one of Prolific's: {', '.join(CATEGORIES)}."
        )
    submission, record = submissions.fetch(ctx, submission_id)
    if submission["status"] == "APPROVED":
        raise ValueError(f"Submission {submission_id} is already approved; it cannot be rejected now.")
    outcome = "already rejected"
    if submission["status"] == "AWAITING REVIEW":
        try:
            ctx.client.post(f"submissions/{submission_id}/transition/",
                            {"action": "REJECT", "message": message,
                             "rejection_category": rejection_category})  # fmt: skip
            outcome = "rejected"
        except ProlificError:
            if ctx.client.get(f"submissions/{submission_id}/")["status"] != "REJECTED":
                raise
    elif submission["status"] != "REJECTED":
        raise ValueError(f"Submission {submission_id} is {submission['status']}; nothing to reject.")
    with writing(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, submission_id)
        if entry and entry["status"] != "confirmed":
            ledger.free_place(connection, entry, "rejected")
        _set_status(connection, ctx, submission_id, "REJECTED", message)
    return outcome


def apply(ctx: Context, chosen: list[Proposal]) -> dict[str, str]:
    """Carry out proposals; submission id -> outcome (or the error, and goes on)."""
    outcomes = {}
    for proposal in chosen:
        try:
            if proposal.decision == "approve":
                outcomes[proposal.submission_id] = approve(ctx, proposal.submission_id)
            else:
                outcomes[proposal.submission_id] = reject(
                    ctx, proposal.submission_id, proposal.message, proposal.category
                )
        except (ProlificError, ledger.BudgetExceeded, ValueError) as error:
            outcomes[proposal.submission_id] = f"failed: {error}"
    return outcomes


def _set_status(connection, ctx: Context, submission_id: str, status: str, feedback: str | None) -> None:
    connection.execute(
        prolific_submissions.update()
        .where(prolific_submissions.c.environment == ctx.environment,
               prolific_submissions.c.submission_id == submission_id)
        .values(status=status, feedback=feedback)
    )  # fmt: skip
