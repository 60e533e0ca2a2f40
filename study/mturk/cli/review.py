"""sync, review, approve, reject."""

from __future__ import annotations

import click

from study.mturk import assignments
from study.mturk import review as review_module
from study.mturk.cli.common import (
    account_options,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)


@click.command()
@directory_argument
@account_options
@reports_errors
def sync(directory: str, sandbox: bool, endpoint_url: str | None) -> None:
    """Pull every assignment and reconcile it with the local sessions (worker, HIT, code)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    report = assignments.sync(ctx)
    _print_sync(report)


def _print_sync(report: assignments.SyncReport) -> None:
    by_status: dict[str, int] = {}
    for item in report.assignments:
        by_status[item.status] = by_status.get(item.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items())) or "none"
    click.echo(f"Assignments: {summary}.")
    for hit_id in report.adopted_hits:
        click.echo(
            f"Found HIT {hit_id} of this study on MTurk that the database lacked (a crashed post?); "
            "it is tracked now."
        )
    if report.excluded_workers:
        click.echo(f"Exclusion qualification granted to {len(report.excluded_workers)} workers.")
    for problem in report.problems:
        click.echo(f"  ! {problem}")
    if report.warned_before:
        click.echo(
            f"{len(report.warned_before)} session(s) still with no submitted assignment on MTurk "
            "(returned or abandoned the HIT, or still working), as warned at an earlier sync."
        )


@click.command()
@directory_argument
@click.option("--yes", is_flag=True, help="Apply without asking (sandbox only: live always asks).")
@click.option("--no-sync", is_flag=True, help="Use the assignments as last synced.")
@account_options
@reports_errors
def review(directory, yes, no_sync, sandbox, endpoint_url) -> None:
    """Propose approve/reject for each submitted assignment, by the documented rules (finished
    session, minimum time, asked the AI, code matches), and apply them after confirmation."""
    ctx = open_account(directory, sandbox, endpoint_url)
    if not no_sync:
        _print_sync(assignments.sync(ctx))
    proposals = review_module.proposals(ctx)
    if not proposals:
        click.echo("Nothing to review: no submitted assignments are waiting.")
        return
    for proposal in proposals:
        click.echo(
            f"{proposal.decision.upper():<8} {proposal.assignment_id}  worker {proposal.worker_id}  "
            f"session {proposal.session_id or '-'}"
        )
        for reason in proposal.reasons:
            click.echo(f"         - {reason}")
        for flag in proposal.flags:
            click.echo(f"         ! {flag}")
    approvals = [p.assignment_id for p in proposals if p.decision == "approve"]
    cost = review_module.approval_cost(ctx, approvals)
    what = f"{len(approvals)} approvals and {len(proposals) - len(approvals)} rejections"
    if ctx.live:
        if not confirm_spend(ctx, what, cost):
            raise click.ClickException("Nothing applied.")
    elif not yes and not click.confirm(
        f"Apply {what} (costs {cost.describe()}, sandbox)?", default=False
    ):
        raise click.ClickException("Nothing applied.")
    for assignment_id, outcome in review_module.apply(ctx, proposals).items():
        click.echo(f"{assignment_id}: {outcome}")


@click.command()
@directory_argument
@click.argument("assignment_ids", nargs=-1, required=True)
@click.option(
    "--feedback",
    default=None,
    help="A message the worker sees (default: [mturk] approve_feedback).",
)
@click.option(
    "--override-rejection", is_flag=True, help="Approve assignments rejected in the last 30 days."
)
@account_options
@reports_errors
def approve(directory, assignment_ids, feedback, override_rejection, sandbox, endpoint_url) -> None:
    """Approve assignments and pay their rewards."""
    ctx = open_account(directory, sandbox, endpoint_url)
    cost = review_module.approval_cost(ctx, list(assignment_ids))
    if ctx.live and not confirm_spend(ctx, f"approving {len(assignment_ids)} assignments", cost):
        raise click.ClickException("Nothing approved.")
    for assignment_id in assignment_ids:
        outcome = review_module.approve(
            ctx,
            assignment_id,
            feedback or ctx.settings.approve_feedback,
            override_rejection=override_rejection,
        )
        click.echo(f"{assignment_id}: {outcome}")


@click.command()
@directory_argument
@click.argument("assignment_ids", nargs=-1, required=True)
@click.option(
    "--feedback", required=True, help="Why, in words the worker will read (MTurk requires it)."
)
@account_options
@reports_errors
def reject(directory, assignment_ids, feedback, sandbox, endpoint_url) -> None:
    """Reject assignments (no reward is paid; the worker's approval rate drops)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    for assignment_id in assignment_ids:
        click.echo(f"{assignment_id}: {review_module.reject(ctx, assignment_id, feedback)}")
