"""Into MTurk: the study's qualification for writers who passed, and the qualification HIT paid
(`study qualify` for a qualification round run on MTurk: study.mturk.provider).

For every submission with a final outcome (study.review.rules, study.review.qualify.candidates),
or of a writer who withdrew (it will never have one: reviewers no longer see it), whose
assignment MTurk has, submitted by the session's own worker (`unconfirmed`: the task URL's
workerId is whatever the browser sent), `qualify`:
  1. pays the qualification HIT (approves the assignment, which confirms its reward in the
     ledger: study.mturk.review.approve) when the final score is at least `pay_min_score`
     (default 2: all but spam), or when the writer withdrew (`study withdraw --study`: their
     work is paid as passed work is); an entry the ledger already shows as paid is not
     touched, so re-running pays nobody twice. Disqualified sessions are left to `study mturk
     review`, whose rules reject them; an assignment the researcher rejected stays unpaid (skipped,
     saying how to override the rejection by hand);
  2. grants the study's qualification (`[review] qualification`, created on first use) to
     writers who passed, with the final score as its integer value, so a main round can
     require e.g. "GreaterThanOrEqualTo 4" or "EqualTo 5"; with `notify`, MTurk emails them.
     A grant is remembered (review_grants) and not repeated, so re-running sends no second
     email; a changed score is granted again with the new value, and a writer who no longer
     passes (a later adjudication) has it revoked. A writer who withdrew is granted nothing, and
     a grant they already hold is revoked (`WITHDREW_REASON` is what MTurk shows them), once:
     its review_grants row goes with it, and the audit log keeps the revocation; the task
     server has turned them away from every round since the withdrawal (study.review.rounds).
Undo a grant with `study mturk qual revoke DIR NAME WORKER`. Payments are first; MTurk emails
only workers this requester has paid or rejected.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sqlalchemy import delete, select

from study.mturk import assignments, budget, ledger, qualifications, review, workers
from study.mturk import settings as mturk_settings
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.review import audit
from study.review import settings as review_settings
from study.review.qualify import Candidate, candidates, withdrawn_writers, withdrew_note
from study.store import reading, writing
from study.store.mturk import mturk_assignments
from study.store.review_tables import review_grants

ACTOR = "study qualify"
# MTurk shows the reason to the worker: it says nothing of why they withdrew, nor of anyone else.
WITHDREW_REASON = ("You withdrew from this study, so this qualification is removed and its "
                   "further rounds are closed to you. Thank you for your work.")


@dataclass
class Report:
    granted: list[tuple[str, str, int]] = field(default_factory=list)  # submission, worker, value
    unchanged: list[str] = field(default_factory=list)
    revoked: list[tuple[str, str]] = field(default_factory=list)
    paid: list[tuple[str, str]] = field(default_factory=list)  # submission, outcome
    skipped: list[tuple[str, str]] = field(default_factory=list)  # submission, why
    failures: list[tuple[str, str]] = field(default_factory=list)
    # Submitted HITs this command does not pay (disqualified, or scored below pay_min_score),
    # neither approved nor rejected yet: MTurk approves (pays) them by itself once
    # auto_approve_hours pass, unless the researcher rejects them first.
    unpaid: list[tuple[str, str, str]] = field(default_factory=list)  # submission, assignment, why
    notify_failures: dict[str, str] = field(default_factory=dict)
    withdrew: list[tuple[str, str]] = field(default_factory=list)  # submission, what was done


def to_pay(ctx: Context, chosen: list[Candidate]) -> list[Candidate]:
    """The candidates whose qualification HIT is due and not yet paid according to the ledger,
    and not rejected (`rejected`)."""
    return [c for c in _scored_to_pay(ctx, chosen) if not _rejected(ctx, c) and not _paid(ctx, c)]


def rejected(ctx: Context, chosen: list[Candidate]) -> list[Candidate]:
    """The candidates scored to be paid whose assignment the researcher rejected on MTurk (by
    `study mturk review` or `reject`, as last synced): a rejection stands until it is overridden
    by hand, which MTurk allows within 30 days (`study mturk approve --override-rejection`)."""
    return [c for c in _scored_to_pay(ctx, chosen) if _rejected(ctx, c)]


def _scored_to_pay(ctx: Context, chosen: list[Candidate]) -> list[Candidate]:
    minimum = review_settings.from_study(ctx.study).pay_min_score
    return [c for c in chosen if c.assignment_id is not None and c.earns_pay(minimum)]


def _paid(ctx: Context, candidate: Candidate) -> bool:
    with reading(ctx.engine) as connection:
        entry = ledger.reward_entry(connection, ctx.environment, candidate.assignment_id)
    return entry is not None and entry["status"] == "confirmed"


def left_unpaid(ctx: Context, chosen: list[Candidate]) -> list[tuple[str, str, str]]:
    """The candidates this command will not pay whose assignment is neither approved nor
    rejected (as last synced), with why it is not paid."""
    minimum = review_settings.from_study(ctx.study).pay_min_score
    found = []
    for c in chosen:
        if c.assignment_id is None or c.earns_pay(minimum):
            continue
        if _status(ctx, c) in ("Approved", "Rejected"):
            continue
        why = "disqualified" if c.score is None else f"scored {c.score}, below pay_min_score {minimum}"
        found.append((c.submission_id, c.assignment_id, why))
    return found


def _rejected(ctx: Context, candidate: Candidate) -> bool:
    return _status(ctx, candidate) == "Rejected"


def _status(ctx: Context, candidate: Candidate) -> str | None:
    """The assignment's status at MTurk as last synced (None: never synced)."""
    with reading(ctx.engine) as connection:
        return connection.execute(
            select(mturk_assignments.c.status).where(
                mturk_assignments.c.environment == ctx.environment,
                mturk_assignments.c.assignment_id == candidate.assignment_id,
            )
        ).scalar()


def carriers(chosen: list[Candidate]) -> dict[str, Candidate]:
    """Worker id -> the submission that carries their grant. A writer passes if any of their
    submissions passes (as the main round's entry check reads it,
    study.review.decisions.writer_passed), so one failed submission does not revoke the grant.
    MTurk holds one value per worker, so one submission carries it: the best (the first of
    equals), as on Prolific; granting each in turn left the last one's score, and an email each."""
    best: dict[str, Candidate] = {}
    for c in chosen:
        if c.judged.outcome.passed and (c.worker_id not in best or c.score > best[c.worker_id].score):
            best[c.worker_id] = c
    return best


def qualify(
    ctx: Context,
    *,
    pay: bool = True,
    notify: bool = False,
    subject: str = "",
    message: str = "",
    confirm=None,
) -> Report:
    """Pay, then grant (see the module docstring). `confirm(cost)` may refuse the payments."""
    settings = review_settings.from_study(ctx.study)
    if message:
        # The email goes to the writers granted by this run, and a grant is not repeated: a
        # message MTurk refuses after the grants would never reach them, however often re-run.
        workers.check_message(subject or ctx.study.title, message)
    report = Report()
    chosen = candidates(ctx)
    for candidate in chosen:
        if candidate.worker_id is None:
            report.skipped.append(
                (candidate.submission_id, "not an MTurk worker (lab access code)")
            )
        elif candidate.provider not in (None, "mturk"):
            report.skipped.append((candidate.submission_id, f"not an MTurk worker (synced from "
                                   f"{candidate.provider}: study qualify --provider {candidate.provider})"))  # fmt: skip
    # A submission no provider has synced yet may be MTurk's, as before the seam.
    mturk = []
    for candidate in chosen:
        if candidate.worker_id is None or candidate.provider not in (None, "mturk"):
            continue
        try:
            why = unconfirmed(ctx, candidate)
        except MTurkError as error:
            report.failures.append((candidate.submission_id, f"checking the assignment: {error}"))
            continue
        if why:
            report.skipped.append((candidate.submission_id, why))
        else:
            mturk.append(candidate)
    if pay:
        report.skipped += [
            (c.submission_id, f"assignment {c.assignment_id} was rejected on MTurk, so its HIT is "
             f"not paid; to pay it after all: study mturk approve {ctx.study.directory} "
             f"{c.assignment_id} --override-rejection")
            for c in rejected(ctx, mturk)
        ]  # fmt: skip
        _pay(ctx, to_pay(ctx, mturk), report, confirm)
        report.unpaid += left_unpaid(ctx, mturk)
    type_id = qualifications.create(
        ctx.requester, ctx.engine, settings.qualification, settings.qualification_description
    )
    best = carriers(mturk)
    withdrawn = withdrawn_writers(ctx)
    for candidate in mturk:
        if candidate.worker_id in withdrawn:
            try:
                revoked = _revoke_withdrawn(ctx, candidate)
            except MTurkError as error:
                report.failures.append((candidate.submission_id, f"revoking the qualification "
                                        f"of a writer who withdrew: {error}"))  # fmt: skip
                continue
            note = withdrew_note(_paid(ctx, candidate), revoked=revoked)
            report.withdrew.append((candidate.submission_id, note))
            continue
        try:
            _grant(ctx, type_id, candidate, notify, report, still_passes=candidate.worker_id in best,
                   carries=best.get(candidate.worker_id) is candidate)  # fmt: skip
        except MTurkError as error:
            report.failures.append((candidate.submission_id, f"qualification: {error}"))
    if message and report.granted:
        report.notify_failures = workers.notify(
            ctx, [worker for _, worker, _ in report.granted], subject or ctx.study.title, message
        )
    return report


def unconfirmed(ctx: Context, candidate: Candidate) -> str | None:
    """Why MTurk does not back this submission's worker, or None if it does. The session's
    worker id is what the task URL said, and anyone can edit a URL: the HIT is paid and the
    qualification granted only when MTurk has the assignment submitted by that same worker
    (as `sync` stored it, or asked now)."""
    with reading(ctx.engine) as connection:
        row = connection.execute(
            select(mturk_assignments.c.worker_id).where(
                mturk_assignments.c.environment == ctx.environment,
                mturk_assignments.c.assignment_id == candidate.assignment_id,
            )
        ).first()
    if row is not None:
        worker_id = row[0]
    else:
        try:
            worker_id = assignments.fetch(ctx, candidate.assignment_id)[0]["WorkerId"]
        except ValueError as error:  # a HIT this study did not post
            return str(error)
        except MTurkError as error:
            if not error.certain:
                raise
            return (
                f"MTurk has no submitted assignment {candidate.assignment_id} ({error.message}): "
                "the HIT was not submitted, or the task was opened with a made-up link"
            )
    if worker_id != candidate.worker_id:
        return (
            f"MTurk says assignment {candidate.assignment_id} was done by worker {worker_id}, not "
            f"by {candidate.worker_id}, whom the session was opened for; `study mturk review` "
            "rejects it"
        )
    return None


def _pay(ctx: Context, due: list[Candidate], report: Report, confirm) -> None:
    if not due:
        return
    if confirm is not None and not confirm(
        review.approval_cost(ctx, [c.assignment_id for c in due])
    ):
        report.skipped.extend((c.submission_id, "payment declined") for c in due)
        return
    # The worker sees the study's approval message, as with `study mturk review`.
    feedback = mturk_settings.from_study(ctx.study).approve_feedback
    for candidate in due:
        try:
            outcome = review.approve(ctx, candidate.assignment_id, feedback)
        except (MTurkError, budget.BudgetExceeded, ValueError) as error:
            report.failures.append((candidate.submission_id, f"payment: {error}"))
            continue
        report.paid.append((candidate.submission_id, outcome))
        with writing(ctx.engine) as connection:
            audit.record(
                connection, ACTOR, audit.QUALIFY_PAY, candidate.submission_id,
                outcome=outcome, environment=ctx.environment,
            )  # fmt: skip


def _grant(
    ctx: Context, type_id: str, candidate: Candidate, notify: bool, report: Report, *,
    still_passes: bool, carries: bool,
) -> None:  # fmt: skip
    with reading(ctx.engine) as connection:
        held = (
            connection.execute(
                select(review_grants).where(
                    review_grants.c.environment == ctx.environment,
                    review_grants.c.submission_id == candidate.submission_id,
                )
            )
            .mappings()
            .first()
        )
    if not carries:  # failed, or another submission of the writer's carries the grant
        if held is not None:
            _withdraw(ctx, candidate, held, report, revoke=not still_passes)
        return
    if (
        held is not None
        and held["value"] == candidate.score
        and held["qualification_type_id"] == type_id
    ):
        report.unchanged.append(candidate.submission_id)
        return
    qualifications.grant(
        ctx.requester, type_id, [candidate.worker_id], value=candidate.score, notify=notify
    )
    with writing(ctx.engine) as connection:
        values = {
            "worker_id": candidate.worker_id,
            "qualification_type_id": type_id,
            "value": candidate.score,
            "granted_at": time.time(),
        }
        if held is None:
            connection.execute(
                review_grants.insert().values(
                    environment=ctx.environment, submission_id=candidate.submission_id, **values
                )
            )
        else:
            connection.execute(
                review_grants.update()
                .where(
                    review_grants.c.environment == ctx.environment,
                    review_grants.c.submission_id == candidate.submission_id,
                )
                .values(**values)
            )
        audit.record(
            connection, ACTOR, audit.QUALIFY_GRANT, candidate.submission_id,
            value=candidate.score, environment=ctx.environment, notified=notify,
        )  # fmt: skip
    report.granted.append((candidate.submission_id, candidate.worker_id, candidate.score))


def _withdraw(ctx: Context, candidate: Candidate, held: dict, report: Report, *, revoke: bool) -> None:
    """A granted submission that no longer passes: its grant's record goes. The qualification
    itself is revoked at MTurk only when `revoke`: MTurk holds one per worker, and a worker
    another of whose submissions passes keeps it."""
    if revoke:
        qualifications.revoke(
            ctx.requester, held["qualification_type_id"], [held["worker_id"]],
            reason="A later review of your qualification submission did not pass it.",
        )  # fmt: skip
    with writing(ctx.engine) as connection:
        connection.execute(
            delete(review_grants).where(
                review_grants.c.environment == ctx.environment,
                review_grants.c.submission_id == candidate.submission_id,
            )
        )
        if revoke:
            audit.record(
                connection, ACTOR, audit.QUALIFY_REVOKE, candidate.submission_id,
                environment=ctx.environment,
            )  # fmt: skip
    if revoke:
        report.revoked.append((candidate.submission_id, held["worker_id"]))


def withdrawn_grants(ctx: Context) -> set[str]:
    """The submissions carrying a grant (review_grants) whose writer has withdrawn since: what
    the next run revokes (`--dry-run` shows them)."""
    withdrawn = withdrawn_writers(ctx)
    with reading(ctx.engine) as connection:
        rows = connection.execute(
            select(review_grants.c.submission_id, review_grants.c.worker_id)
            .where(review_grants.c.environment == ctx.environment)
        ).all()  # fmt: skip
    return {submission_id for submission_id, worker_id in rows if worker_id in withdrawn}


def _revoke_withdrawn(ctx: Context, candidate: Candidate) -> bool:
    """Revoke the grant this submission carries for a writer who withdrew; False when it carries
    none (never granted, or revoked by an earlier run: nothing is called twice). A grant MTurk
    no longer holds (revoked by hand with `study mturk qual revoke`) is only forgotten."""
    with reading(ctx.engine) as connection:
        held = connection.execute(
            select(review_grants).where(
                review_grants.c.environment == ctx.environment,
                review_grants.c.submission_id == candidate.submission_id,
            )
        ).mappings().first()  # fmt: skip
    if held is None:
        return False
    qualifications.revoke(
        ctx.requester, held["qualification_type_id"], [held["worker_id"]], reason=WITHDREW_REASON
    )
    with writing(ctx.engine) as connection:
        connection.execute(
            delete(review_grants).where(
                review_grants.c.environment == ctx.environment,
                review_grants.c.submission_id == candidate.submission_id,
            )
        )
        audit.record(
            connection, ACTOR, audit.QUALIFY_REVOKE, candidate.submission_id,
            environment=ctx.environment, why="withdrew",
        )  # fmt: skip
    return True
