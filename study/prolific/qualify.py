"""Into Prolific: the qualification round's submissions paid and its passed writers put in the
study's "qualified" participant group, which a main round's Prolific study allows alone
(study.prolific.studies.filters): `study qualify` (through study.providers) and `study prolific
qualify` for a round run on Prolific. The same outcomes as MTurk's (study.mturk.qualify), from
the same candidates (study.review.qualify.candidates, study.review.rules): a submission scored at least
`[review] pay_min_score` is approved (paid) once; a writer who passed joins the group with the
score remembered; one a later adjudication failed is taken out again. A writer who withdrew
(`study withdraw --study`) has their submission approved as passed work is, without a review
outcome (reviewers no longer see it), is not added, and is taken out of the group if they were
put in it before they withdrew ("qualification revoked: withdrew", audited; once: the group's
records, study.prolific.groups). A submission Prolific has from another participant than the one the session was
opened for (an edited PROLIFIC_PID) is skipped, neither paid nor admitted, as MTurk's qualify
skips it. The submissions it does not pay and that still await review are named
(`Report.unpaid`), as MTurk's qualify names them: they are left for the researcher to approve or
reject.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from study.prolific import groups, ledger, review
from study.prolific.client import ProlificError
from study.prolific.context import Context
from study.review import audit
from study.review import qualify as shared
from study.review import settings as review_settings
from study.store import reading, writing
from study.store.prolific import prolific_submissions

ACTOR = "study prolific qualify"


@dataclass
class Report:
    added: list[tuple[str, int]] = field(default_factory=list)  # participant, score
    removed: list[str] = field(default_factory=list)
    paid: list[tuple[str, str]] = field(default_factory=list)  # submission (review pseudonym), outcome
    skipped: list[tuple[str, str]] = field(default_factory=list)  # submission, why
    failures: list[tuple[str, str]] = field(default_factory=list)
    # Submissions this command does not pay (disqualified, or scored below pay_min_score) that
    # are still AWAITING REVIEW: Prolific pays one only once it is approved, so they wait for
    # the researcher to approve or reject them.
    unpaid: list[tuple[str, str, str]] = field(default_factory=list)  # submission, Prolific's id, why
    withdrew: list[tuple[str, str]] = field(default_factory=list)  # submission, what was done


def qualify(ctx: Context, *, pay: bool = True, confirm=None) -> Report:
    """Pay, then fill the group (see the module docstring). `confirm(cost)` may refuse the
    payments (live asks, showing their cost); the group is filled either way."""
    settings = review_settings.from_study(ctx.study)
    report = Report()
    with reading(ctx.engine) as connection:
        synced = connection.execute(
            select(prolific_submissions.c.submission_id, prolific_submissions.c.participant_id,
                   prolific_submissions.c.status)
            .where(prolific_submissions.c.environment == ctx.environment)
        ).all()  # fmt: skip
    ours = {row.submission_id: row.participant_id for row in synced}
    status = {row.submission_id: row.status for row in synced}
    chosen = []
    for candidate in shared.candidates(ctx):
        if candidate.assignment_id not in ours:
            continue
        # The session's PID is what the study URL said, and anyone can edit a URL: pay and admit
        # only the participant Prolific has the submission from (study.mturk.qualify.unconfirmed).
        participant = ours[candidate.assignment_id]
        if participant != candidate.worker_id:
            report.skipped.append((candidate.submission_id, (
                f"Prolific says submission {candidate.assignment_id} was made by participant "
                f"{participant}, not by {candidate.worker_id}, whom the session was opened for; "
                "`study prolific review` rejects it")))  # fmt: skip
            continue
        chosen.append(candidate)
    due = []
    for candidate in chosen:
        if pay and candidate.earns_pay(settings.pay_min_score) and not _paid(ctx, candidate):
            due.append(candidate)
    if due and confirm is not None and not confirm(
        review.approval_cost(ctx, [c.assignment_id for c in due])
    ):
        report.failures += [(c.submission_id, "payment declined") for c in due]
        due = []
    for candidate in due:
        try:
            outcome = review.approve(ctx, candidate.assignment_id)
        except (ProlificError, ledger.BudgetExceeded, ValueError) as error:
            report.failures.append((candidate.submission_id, f"payment: {error}"))
            continue
        report.paid.append((candidate.submission_id, outcome))
        with writing(ctx.engine) as connection:
            audit.record(connection, ACTOR, audit.QUALIFY_PAY, candidate.submission_id,
                         outcome=outcome, environment=ctx.environment)  # fmt: skip
    if pay:
        report.unpaid = left_unpaid(chosen, status, settings.pay_min_score)
    # A writer passes if any of their submissions passes (study.review.decisions.writer_passed,
    # the task server's check), with their best score; only writers none of whose passes leave.
    # A writer who withdrew is not added, and leaves the group if they were in it (their
    # payment above is as anyone's); the group's records make a re-run call nothing again.
    withdrawn = shared.withdrawn_writers(ctx)
    leaving = groups.remove(ctx, "qualified", sorted({c.worker_id for c in chosen} & withdrawn))
    report.removed += leaving
    report.withdrew = [(c.submission_id, shared.withdrew_note(_paid(ctx, c), revoked=c.worker_id in leaving))
                       for c in chosen if c.worker_id in withdrawn]  # fmt: skip
    with writing(ctx.engine) as connection:
        for candidate in chosen:
            if candidate.worker_id in leaving:
                audit.record(connection, ACTOR, audit.QUALIFY_REVOKE, candidate.submission_id,
                             environment=ctx.environment, why="withdrew")  # fmt: skip
    chosen = [c for c in chosen if c.worker_id not in withdrawn]
    passed: dict[str, int] = {}
    for c in chosen:
        if c.judged.outcome.passed:
            passed[c.worker_id] = max(c.score, passed.get(c.worker_id, c.score))
    failed = [c.worker_id for c in chosen if c.worker_id not in passed]
    for participant in groups.add(ctx, "qualified", passed):
        report.added.append((participant, passed[participant]))
    report.removed += groups.remove(ctx, "qualified", failed)
    with writing(ctx.engine) as connection:
        for candidate in chosen:
            if candidate.worker_id in dict(report.added):
                audit.record(connection, ACTOR, audit.QUALIFY_GRANT, candidate.submission_id,
                             value=candidate.score, environment=ctx.environment)  # fmt: skip
            elif candidate.worker_id in report.removed:
                audit.record(connection, ACTOR, audit.QUALIFY_REVOKE, candidate.submission_id,
                             environment=ctx.environment)  # fmt: skip
    return report


def _paid(ctx: Context, candidate) -> bool:
    with reading(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, candidate.assignment_id)
    return entry is not None and entry["status"] == "confirmed"


def left_unpaid(chosen, status: dict[str, str], minimum: int) -> list[tuple[str, str, str]]:
    """The candidates `qualify` does not pay whose submission is still AWAITING REVIEW (as last
    synced), with why it is not paid."""
    found = []
    for c in chosen:
        if c.earns_pay(minimum):
            continue
        if status.get(c.assignment_id) != "AWAITING REVIEW":
            continue
        why = "disqualified" if c.score is None else f"scored {c.score}, below pay_min_score {minimum}"
        found.append((c.submission_id, c.assignment_id, why))
    return found
