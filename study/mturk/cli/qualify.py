"""`study qualify` for a qualification round run on MTurk (study.mturk.provider): pay its HITs
and grant the study's MTurk qualification (study.mturk.qualify). The top-level command
(study.review.cli.qualify) checks the study and hands its arguments here."""

from __future__ import annotations

import click

from study.mturk import qualify as mturk_qualify
from study.mturk import review
from study.mturk.cli.common import (
    account_options,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)
from study.mturk import settings as mturk_settings
from study.review import settings as review_settings
from study.review.qualify import candidates, withdrawn_writers


@click.command()
@directory_argument
@click.option("--notify", is_flag=True, help="Let MTurk email each newly qualified worker.")
@click.option("--message", default="", help="Also email the newly qualified workers this text.")
@click.option("--subject", default="", help="The subject of --message (default: the study title).")
@click.option(
    "--pay/--no-pay", default=True, show_default=True, help="Pay (approve) the qualification HITs."
)
@click.option(
    "--dry-run", is_flag=True, help="Show the outcomes and what would be done; change nothing."
)
@account_options
@reports_errors
def qualify(directory, notify, message, subject, pay, dry_run, sandbox, endpoint_url) -> None:
    """Grant the study's MTurk qualification (value: the score) to writers who passed, and pay
    the qualification HITs through the ledger. Safe to re-run: nobody is paid or emailed twice.
    Undo a grant with `study mturk qual revoke DIR NAME WORKER`."""
    ctx = open_account(directory, sandbox, endpoint_url)
    settings = review_settings.from_study(ctx.study)
    if dry_run:
        chosen = candidates(ctx)
        ours = [c for c in chosen if c.provider in (None, "mturk")]  # not another provider's
        # As the run would: only submissions MTurk has from the session's own worker.
        ours = [c for c in ours if c.worker_id and not mturk_qualify.unconfirmed(ctx, c)]
        due = {c.submission_id for c in mturk_qualify.to_pay(ctx, ours)} if pay else set()
        granting = mturk_qualify.carriers(ours)
        revoking, withdrawn = mturk_qualify.withdrawn_grants(ctx), withdrawn_writers(ctx)
        for candidate in chosen:
            outcome = candidate.judged.outcome
            action = "grant" if granting.get(candidate.worker_id) is candidate else "-"
            if candidate.worker_id in withdrawn:  # granted nothing; a grant held is revoked
                action = "revoke" if candidate.submission_id in revoking else "-"
            paying = "pay" if candidate.submission_id in due else "-"
            click.echo(
                f"{candidate.submission_id}  {candidate.worker_id or '(lab)'}  {outcome.status}"
                f"  score {outcome.score if outcome.score is not None else '-'}  {action}  {paying}"
            )
        # What the run would spend and leave to MTurk, before anything is spent.
        cost = review.approval_cost(ctx, [c.assignment_id for c in ours if c.submission_id in due])
        money = "sandbox money" if not ctx.live else "real money"
        click.echo(
            f"Dry run: nothing paid, granted or emailed. The run would pay {len(due)} HIT(s), up "
            f"to {cost.describe()} ({money})."
        )
        if pay:
            _left_to_mturk(ctx, directory, mturk_qualify.left_unpaid(ctx, ours))
        return
    report = mturk_qualify.qualify(
        ctx,
        pay=pay,
        notify=notify,
        subject=subject,
        message=message,
        confirm=lambda cost: confirm_spend(ctx, "Paying the qualification HITs", cost),
    )
    for submission_id, outcome in report.paid:
        click.echo(f"{submission_id}: HIT {outcome}")
    for submission_id, worker_id, value in report.granted:
        click.echo(
            f"{submission_id}: granted '{settings.qualification}' to {worker_id} with value {value}"
        )
    for submission_id, worker_id in report.revoked:
        click.echo(
            f"{submission_id}: revoked '{settings.qualification}' from {worker_id} (no longer passes)"
        )
    for submission_id, why in report.skipped:
        click.echo(f"{submission_id}: skipped, {why}")
    for submission_id, note in report.withdrew:
        click.echo(f"{submission_id}: {note}")
    _left_to_mturk(ctx, directory, report.unpaid)
    for worker_id, why in report.notify_failures.items():
        click.echo(f"{worker_id}: not emailed, {why}", err=True)
    click.echo(
        f"{len(report.granted)} granted, {len(report.unchanged)} already held, "
        f"{len(report.paid)} HITs paid or confirmed, {len(report.failures)} failures."
    )
    for submission_id, why in report.failures:
        click.echo(f"{submission_id}: {why}", err=True)
    if report.failures:
        raise click.ClickException(
            "Some steps failed (above); run the same command again to retry them."
        )


def _left_to_mturk(ctx, directory: str, unpaid: list[tuple[str, str, str]]) -> None:
    """The submitted HITs this command does not pay, which MTurk pays by itself unless decided."""
    if not unpaid:
        return
    hours = mturk_settings.from_study(ctx.study).auto_approve_hours
    for submission_id, assignment_id, why in unpaid:
        click.echo(f"{submission_id}: not paid, {why} (assignment {assignment_id})")
    ids = " ".join(assignment_id for _, assignment_id, _ in unpaid)
    click.echo(
        f"Not paid here is not unpaid: MTurk approves (pays) a submitted HIT by itself "
        f"{hours:g} hours after its submission, so {len(unpaid)} HIT(s) above will be "
        f"paid unless decided before then. Fix: study mturk reject {directory} {ids} "
        f"--feedback TEXT (or approve them)."
    )
