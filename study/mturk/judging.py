"""Judges recruited and paid through the study's own MTurk code and payments ledger (the judging
round, study.judging, is provider-free; `study judging post` and `review` are MTurk's:
study.mturk.cli.judging).

`post` is `study mturk post` (study.mturk.posting: crash-safe tokens, the budget cap, every
reward reserved in the ledger) with the judging HIT's title, description and pay, and an
ExternalQuestion pointing at /judge. Each assignment is one task, and MTurk lets a worker take
one assignment of a HIT, so a HIT of n assignments reaches n different judges.

`proposals` decides each submitted judging assignment; `study judging review` shows them and
applies them through study.mturk.review.approve/reject, which confirm or cancel the reward in
the ledger (idempotent: a re-run finds the entry). The rules, in order:
  1. the code matches: a task was claimed with this assignment, by this worker, was submitted,
     and the verification code sent to MTurk is the task's;
  2. gold: with [judging] reject_failed_gold, a judge flagged by the gold check is rejected;
     otherwise (the default) they are paid, since they did the work and MTurk's accepted reason
     to reject is a failed attention check the researcher chose to enforce. Either way the
     proposal's `flags` tell the researcher, never the worker, how the judge did on the gold
     items and whether their ratings are kept ([judging] exclude_failed_gold,
     study.judging.results), so no flagged judge is paid as a plain approval.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal

from sqlalchemy import select

from study.judging.gold import JudgeCheck
from study.judging.results import Results
from study.judging.settings import JudgingSettings
from study.mturk import assignments as assignment_module
from study.mturk import hits as hit_module
from study.mturk import posting
from study.mturk import review as mturk_review
from study.mturk.context import Context
from study.review import settings as review_settings
from study.store import reading
from study.store.judging import judging_tasks

APPROVE_FEEDBACK = "Thank you for rating these texts!"
REJECT_INTRO = "Sorry, we could not approve this HIT:"


@dataclass
class Proposal:
    assignment_id: str
    worker_id: str
    task_id: str | None
    decision: str  # approve | reject
    reasons: list[str]
    feedback: str
    # For the researcher, never the worker: the gold check of a flagged judge and what follows.
    flags: list[str] = field(default_factory=list)


def judging_context(ctx: Context, settings: JudgingSettings) -> Context:
    """The study's MTurk context with the judging HIT's title and description, and without the
    qualification the review grants writers ([review] qualification): a main round's "passed
    the qualification round" would let only the study's own writers judge, rating their peers'
    texts and their own, from a pool too small to fill the round. The researcher's other
    requirements (a language, a region) and the paper's ([mturk] paper_requirements) apply."""
    granted = review_settings.from_study(ctx.study).qualification
    kept = tuple(q for q in ctx.settings.qualifications if q.qualification != granted)
    return replace(ctx, settings=replace(ctx.settings, title=settings.title, description=settings.description,
                                         keywords="rating, reading, text", qualifications=kept))  # fmt: skip


def judging_url(task_url: str) -> str:
    """/judge beside the writers' /task, when only [mturk] task_url is known."""
    base = task_url.rstrip("/")
    return base[: -len("/task")] + hit_module.JUDGING_PAGE if base.endswith("/task") else task_url


def post(ctx: Context, settings: JudgingSettings, *, hits: int, assignments: int, reward: Decimal,
         task_url: str, confirm=None) -> posting.Posted | None:  # fmt: skip
    return posting.post(
        judging_context(ctx, settings), hits=hits, assignments=assignments, reward=reward,
        task_url=task_url, confirm=confirm, page=hit_module.JUDGING_PAGE,
    )  # fmt: skip


def gold_flags(check: JudgeCheck | None, settings: JudgingSettings) -> list[str]:
    """What the researcher reviewing a judge flagged by the gold check must see. Pure."""
    if check is None or not check.flagged:
        return []
    kept = ("left out of the results, report and release ([judging] exclude_failed_gold = true)"
            if settings.exclude_failed_gold else "kept, marked judge_flagged ([judging] exclude_failed_gold = false)")
    paid = ("rejected: [judging] reject_failed_gold = true" if settings.reject_failed_gold else
            "paid for the work done; to reject flagged judges set [judging] reject_failed_gold = true")
    return [
        f"flagged by gold: {check.gold_correct} of {check.gold_rated} gold items rated within "
        f"{settings.gold_tolerance} of the known score ({settings.gold_min_correct:.0%} needed)",
        f"ratings {kept}",
        paid,
    ]  # fmt: skip


def propose(assignment: dict, task: dict | None, *, flagged: bool, reject_flagged: bool) -> Proposal:
    """The decision for one submitted judging assignment (a row of mturk_assignments). Pure."""
    reasons = []
    code = assignment_module.parse_answer(assignment.get("answer")).get(assignment_module.CODE_FIELD)
    if task is None:
        reasons.append("no judging task was opened with this assignment")
    elif task["judge"] != assignment["worker_id"]:
        reasons.append("the task belongs to another worker")
    elif task["submitted_at"] is None:
        reasons.append("the texts were not all rated and submitted")
    elif code != task["verification_code"]:
        reasons.append(f"verification code {code!r} does not match our records")
    if not reasons and flagged and reject_flagged:
        reasons.append("too many texts with known answers were rated far from those answers")
    if reasons:
        return Proposal(assignment["assignment_id"], assignment["worker_id"], task and task["task_id"],
                        "reject", reasons, f"{REJECT_INTRO} " + "; ".join(reasons) + ".")  # fmt: skip
    return Proposal(assignment["assignment_id"], assignment["worker_id"], task["task_id"], "approve", [],
                    APPROVE_FEEDBACK)  # fmt: skip


def proposals(ctx: Context, results: Results) -> list[Proposal]:
    """A proposal for every judging assignment `sync` last saw as Submitted."""
    judging = {r["hit_id"] for r in hit_module.rows(ctx) if hit_module.is_judging(r)}
    found = []
    with reading(ctx.engine) as connection:
        for assignment in assignment_module.stored(ctx, status="Submitted"):
            if assignment["hit_id"] not in judging:
                continue
            row = connection.execute(
                select(judging_tasks).where(judging_tasks.c.assignment_id == assignment["assignment_id"])
            ).mappings().first()  # fmt: skip
            check = results.checks.get(assignment["worker_id"])
            proposal = propose(assignment, dict(row) if row else None, flagged=bool(check and check.flagged),
                               reject_flagged=results.settings.reject_failed_gold)  # fmt: skip
            proposal.flags = gold_flags(check, results.settings)
            found.append(proposal)
    return found


def apply(ctx: Context, chosen: list[Proposal]) -> dict[str, str]:
    """Approve or reject through the writers' code, so every reward moves through the ledger."""
    return mturk_review.apply(ctx, chosen)  # Proposal has the fields apply reads
