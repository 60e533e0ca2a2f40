"""sync, review, approve, reject."""

from __future__ import annotations

import click

from study.prolific import review as review_module
from study.prolific import submissions
from study.prolific.cli.common import (
    api_option,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)


@click.command()
@directory_argument
@api_option
@reports_errors
def sync(directory: str, api_url: str | None, live: bool) -> None:
    """Pull every submission of this study's Prolific studies and reconcile it with the local
    sessions (participant, study, completion code) and the ledger."""
    _print_sync(submissions.sync(open_account(directory, api_url, live)))


def _print_sync(report: submissions.SyncReport) -> None:
    counts: dict[str, int] = {}
    for item in report.submissions:
        counts[item.status] = counts.get(item.status, 0) + 1
    click.echo("Submissions: " + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none") + ".")
    for study_id in report.adopted_studies:
        click.echo(f"Found draft {study_id} of this study on Prolific that the database lacked "
                   "(a crashed draft?); it is tracked now.")  # fmt: skip
    if report.blocked:
        click.echo(f"Added {len(report.blocked)} participants to the repeat block group.")
    for problem in report.problems:
        click.echo(f"  ! {problem}")


@click.command()
@directory_argument
@click.option("--yes", is_flag=True, help="Apply without asking (emulator only: live always asks).")
@click.option("--no-sync", is_flag=True, help="Use the submissions as last synced.")
@api_option
@reports_errors
def review(directory, yes, no_sync, api_url, live: bool) -> None:
    """Propose approve/reject for each submission awaiting review, by the same rules as MTurk's
    (code, finished, minimum time, asked the AI, wrote enough), and apply them after confirmation."""
    ctx = open_account(directory, api_url, live)
    if not no_sync:
        _print_sync(submissions.sync(ctx))
    proposals = review_module.proposals(ctx)
    if not proposals:
        click.echo("Nothing to review: no submissions are awaiting review.")
        return
    for proposal in proposals:
        click.echo(f"{proposal.decision.upper():<8} {proposal.submission_id}  "
                   f"session {proposal.session_id or '-'}"
                   + (f"  ({proposal.category})" if proposal.category else ""))  # fmt: skip
        for reason in proposal.reasons:
            click.echo(f"         - {reason}")
        for flag in proposal.flags:
            click.echo(f"         ! {flag}")
    approvals = [p.submission_id for p in proposals if p.decision == "approve"]
    cost = review_module.approval_cost(ctx, approvals)
    what = f"{len(approvals)} approvals and {len(proposals) - len(approvals)} rejections"
    if ctx.live:
        if not confirm_spend(ctx, what, cost):
            raise click.ClickException("Nothing applied.")
    elif not yes and not click.confirm(f"Apply {what} (costs {cost.describe()}, emulator)?", default=False):
        raise click.ClickException("Nothing applied.")
    for submission_id, outcome in review_module.apply(ctx, proposals).items():
        click.echo(f"{submission_id}: {outcome}")


@click.command()
@directory_argument
@click.argument("submission_ids", nargs=-1, required=True)
@api_option
@reports_errors
def approve(directory, submission_ids, api_url, live: bool) -> None:
    """Approve submissions and pay their rewards."""
    ctx = open_account(directory, api_url, live)
    cost = review_module.approval_cost(ctx, list(submission_ids))
    # The emulator says the cost too ("emulator money"), as bonus and publish do.
    if not confirm_spend(ctx, f"approving {len(submission_ids)} submissions", cost):
        raise click.ClickException("Nothing approved.")
    for submission_id in submission_ids:
        click.echo(f"{submission_id}: {review_module.approve(ctx, submission_id)}")


@click.command()
@directory_argument
@click.argument("submission_ids", nargs=-1, required=True)
@click.option("--message", required=True, help="Why, in at least 100 characters the participant reads.")
@click.option("--category", "rejection_category", required=True,
              type=click.Choice(review_module.CATEGORIES), help="Prolific's rejection category.")
@api_option
@reports_errors
def reject(directory, submission_ids, message, rejection_category, api_url, live: bool) -> None:
    """Reject submissions (no reward; Prolific offers the place again)."""
    ctx = open_account(directory, api_url, live)
    for submission_id in submission_ids:
        outcome = review_module.reject(ctx, submission_id, message, rejection_category)
        click.echo(f"{submission_id}: {outcome}")
