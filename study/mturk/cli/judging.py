"""`study judging post` and `study judging review`: a judging round's judges recruited and paid
on MTurk (study.mturk.judging), through the study's ledger. study.cli adds them to the
`study judging` group (study.judging.cli), which names no provider."""

from __future__ import annotations

import math

import click

from study.judging import settings as judging_settings
from study.judging.cli import collect
from study.mturk import assignments, money
from study.mturk import hits as hit_module
from study.mturk import judging as recruit
from study.mturk.cli.common import (
    account_options, confirm_spend, directory_argument, load_study, open_account, reports_errors,
)  # fmt: skip


@click.command()
@directory_argument
@click.option("--hits", "count", default=None, type=click.IntRange(min=1),
              help="HITs to post (default: as many as keep each under 10 assignments, which "
                   "MTurk charges 40% instead of 20%; 1 with --assignments).")
@click.option("--assignments", default=None, type=click.IntRange(min=1),
              help="Judges per HIT (default: every unfinished task no posted judging HIT "
                   "reaches yet, spread over the HITs).")
@click.option("--reward", default=None, metavar="USD", help="Pay per task (default: [judging] reward).")
@click.option("--task-url", default=None, metavar="URL",
              help="The https address of /judge (default: /judge beside [mturk] task_url).")
@account_options
@reports_errors
def post(directory, count, assignments, reward, task_url, sandbox, endpoint_url) -> None:
    """Post HITs whose ExternalQuestion opens /judge, paid through the study's ledger."""
    study = load_study(directory)
    settings = judging_settings.from_study(study)
    amount = money.parse_usd(reward, what="--reward") if reward else settings.reward
    if amount is None:
        raise click.ClickException("No reward: pass --reward 1.00 or set reward in [judging] of study.toml.")
    found = collect(study, settings)
    if not found.tasks:
        raise click.ClickException(f"No judging round yet. Fix: study judging build {directory}")
    ctx = open_account(directory, sandbox, endpoint_url, study)
    url = task_url or recruit.judging_url(ctx.settings.task_url)
    if assignments:
        count, per_hit = count or 1, assignments
    else:
        count, per_hit = _judges_needed(ctx, found.tasks - found.tasks_submitted, count)
    posted = recruit.post(
        ctx, settings, hits=count, assignments=per_hit, reward=amount, task_url=url,
        confirm=lambda cost: confirm_spend(ctx, f"posting {count} judging HITs x {per_hit} assignments", cost),
    )  # fmt: skip
    if posted is None:
        raise click.ClickException("Nothing posted.")
    if posted.resumed:  # as `study mturk post` says: what was asked this time was not posted
        click.echo(f"Finished {len(posted.hits)} judging HITs an interrupted post had planned; "
                   "nothing new was posted. Run post again to post more.")  # fmt: skip
    for row in posted.hits:
        click.echo(f"{row['HIT']['HITId']}  {row['HIT']['MaxAssignments']} x ${row['HIT']['Reward']}")
    click.echo(f"Posted {len(posted.hits)} judging HITs; at most {posted.cost.describe()}.")


def _judges_needed(ctx, unfinished: int, count: int | None) -> tuple[int, int]:
    """HITs and assignments per HIT for the unfinished tasks that no open judging assignment
    reaches yet: HITs posted before still bring judges, so posting again must not ask for every
    task twice. Without `count`, HITs of at most 9 assignments: MTurk charges 40% on a HIT of 10
    or more (study.mturk.money), and a round's judges need not share a HIT."""
    coming = sum(hit_module.open_slots(row.get("HIT")) for row in hit_module.study_hits(ctx)
                 if hit_module.is_judging(row))  # fmt: skip
    if unfinished - coming <= 0:
        raise click.ClickException(
            f"Nothing to post: {unfinished} tasks are unfinished and the judging HITs already "
            f"posted have {coming} open assignments. Fix: wait for their judges (study judging "
            "review), or pass --assignments N to post more anyway."
        )
    missing = unfinished - coming
    if count is None:
        count = math.ceil(missing / (money.LARGE_HIT_ASSIGNMENTS - 1))
    return count, max(1, math.ceil(missing / count))


@click.command()
@directory_argument
@click.option("--yes", is_flag=True, help="Apply without asking (sandbox only: live always asks).")
@account_options
@reports_errors
def review(directory, yes, sandbox, endpoint_url) -> None:
    """Sync the judging HITs, propose approve/reject per submitted task, and pay through the ledger."""
    ctx = open_account(directory, sandbox, endpoint_url)
    settings = judging_settings.from_study(ctx.study)
    assignments.sync(ctx)
    proposals = recruit.proposals(ctx, collect(ctx.study, settings))
    if not proposals:
        click.echo("Nothing to review: no submitted judging assignments are waiting.")
        return
    for proposal in proposals:
        flagged = "  flagged by gold" if proposal.flags else ""
        click.echo(f"{proposal.decision.upper():<8} {proposal.assignment_id}  worker {proposal.worker_id}{flagged}")
        for reason in proposal.reasons:
            click.echo(f"         - {reason}")
        for flag in proposal.flags:
            click.echo(f"         ! {flag}")
    what = _counted(proposals)
    if ctx.live:
        if not click.confirm(f"LIVE: apply {what}?", default=False):
            raise click.ClickException("Nothing applied.")
    elif not yes and not click.confirm(f"Apply {what} (sandbox)?", default=False):
        raise click.ClickException("Nothing applied.")
    for assignment_id, outcome in recruit.apply(ctx, proposals).items():
        click.echo(f"{assignment_id}: {outcome}")


def _counted(proposals: list[recruit.Proposal]) -> str:
    """What the researcher confirms, naming the flagged judges among those paid or rejected."""
    parts = []
    for decision, plural in (("approve", "approvals"), ("reject", "rejections")):
        chosen = [p for p in proposals if p.decision == decision]
        flagged = sum(bool(p.flags) for p in chosen)
        parts.append(f"{len(chosen)} {plural}" + (f" ({flagged} of judges flagged by gold)" if flagged else ""))
    return " and ".join(parts)
