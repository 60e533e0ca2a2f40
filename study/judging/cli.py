"""`study judging`: build a judging round, recruit and pay its judges, read its results."""

from __future__ import annotations

import math
from pathlib import Path

import click

from study import config as study_config
from study.judging import export as export_module
from study.judging import items as item_module
from study.judging import recruit, results
from study.judging import settings as judging_settings
from study.mturk import assignments, money
from study.mturk.cli.common import (
    account_options, confirm_spend, directory_argument, load_study, open_account, reports_errors,
)  # fmt: skip
from study.store import create_tables, make_engine, reading, writing


def _study(directory: str):
    try:
        study = study_config.load(directory)
        return study, judging_settings.from_study(study)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None


def collect(study, settings) -> results.Results:
    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with reading(engine) as connection:
            return results.collect(connection, study, settings)
    finally:
        engine.dispose()


@click.group()
def judging() -> None:
    """A judging round: crowd judges rate the study's texts on a rubric ([judging] in study.toml)."""


@judging.command()
@directory_argument
def build(directory: str) -> None:
    """Make the round's items (finished texts, whole or split into sentences), gold items and
    balanced tasks; judges then enter at /judge of `study serve`."""
    study, settings = _study(directory)
    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with writing(engine) as connection:
            built = item_module.build(connection, study, settings)
    except item_module.BuildError as error:
        raise click.ClickException(str(error)) from None
    finally:
        engine.dispose()
    click.echo(
        f"Built a judging round of {built.items} {settings.unit} item(s) from {built.sessions} session(s), "
        f"{built.gold} gold item(s): {built.tasks} task(s), each item rated by {settings.k} judges."
    )


@judging.command()
@directory_argument
@click.option("--hits", "count", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--assignments", default=None, type=click.IntRange(min=1),
              help="Judges per HIT (default: every open task, spread over --hits).")
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
    per_hit = assignments or max(1, math.ceil((found.tasks - found.tasks_submitted) / count))
    posted = recruit.post(
        ctx, settings, hits=count, assignments=per_hit, reward=amount, task_url=url,
        confirm=lambda cost: confirm_spend(ctx, f"posting {count} judging HITs x {per_hit} assignments", cost),
    )  # fmt: skip
    if posted is None:
        raise click.ClickException("Nothing posted.")
    for row in posted.hits:
        click.echo(f"{row['HIT']['HITId']}  {row['HIT']['MaxAssignments']} x ${row['HIT']['Reward']}")
    click.echo(f"Posted {len(posted.hits)} judging HITs; at most {posted.cost.describe()}.")


@judging.command()
@directory_argument
def status(directory: str) -> None:
    """How the round is going: tasks, ratings, flagged judges, agreement."""
    study, settings = _study(directory)
    found = collect(study, settings)
    click.echo(f"Judging round: {found.items} {settings.unit} item(s), {found.tasks} task(s), "
               f"{found.tasks_submitted} submitted")  # fmt: skip
    judges = {r["judge"] for r in found.ratings} | set(found.checks)
    click.echo(f"Ratings kept: {len(found.kept)} of {len(found.ratings)}; judges {len(judges)}, "
               f"flagged by gold {len(found.flagged)}")  # fmt: skip
    a = found.agreement
    if a is None or math.isnan(a.alpha):
        click.echo("Krippendorff's alpha: not yet computable (too few items with two kept ratings, or one score only)")
    else:
        interval = "" if math.isnan(a.low) else f" (95% CI {a.low:.2f} to {a.high:.2f})"
        click.echo(f"Krippendorff's alpha ({settings.agreement_level}): {a.alpha:.2f}{interval} over {a.items} items")


@judging.command()
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
        click.echo(f"{proposal.decision.upper():<8} {proposal.assignment_id}  worker {proposal.worker_id}")
        for reason in proposal.reasons:
            click.echo(f"         - {reason}")
    what = f"{sum(p.decision == 'approve' for p in proposals)} approvals and {sum(p.decision == 'reject' for p in proposals)} rejections"
    if ctx.live:
        if not click.confirm(f"LIVE: apply {what}?", default=False):
            raise click.ClickException("Nothing applied.")
    elif not yes and not click.confirm(f"Apply {what} (sandbox)?", default=False):
        raise click.ClickException("Nothing applied.")
    for assignment_id, outcome in recruit.apply(ctx, proposals).items():
        click.echo(f"{assignment_id}: {outcome}")


@judging.command("export")
@directory_argument
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder.")
def export_command(directory: str, out: str) -> None:
    """Write the ratings joined to their sessions and arms (judging_*.csv, judging_rubric.json)."""
    study, settings = _study(directory)
    written = export_module.write(collect(study, settings), Path(out))
    click.echo(f"Wrote {written} ratings to {Path(out) / export_module.RATINGS_CSV}")
