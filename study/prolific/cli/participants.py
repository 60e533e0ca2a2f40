"""notify, block, qualify, groups."""

from __future__ import annotations

import click

from study.prolific import groups, messages
from study.prolific import qualify as qualify_module
from study.prolific.cli.common import (
    api_option,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)


@click.command()
@directory_argument
@click.argument("study_id")
@click.argument("participant_ids", nargs=-1, required=True)
@click.option("--message", required=True, help="What the participants read on Prolific.")
@api_option
@reports_errors
def notify(directory, study_id, participant_ids, message, api_url, live: bool) -> None:
    """Message participants of one of this study's Prolific studies."""
    ctx = open_account(directory, api_url, live)
    for participant, outcome in messages.notify(ctx, study_id, list(participant_ids), message).items():
        click.echo(f"{participant}: {outcome}")


@click.command()
@directory_argument
@click.argument("participant_ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Take them out of the block group again.")
@api_option
@reports_errors
def block(directory, participant_ids, undo, api_url, live: bool) -> None:
    """Keep participants out of this study's future Prolific studies (its "blocked" group,
    which every new draft block-lists)."""
    ctx = open_account(directory, api_url, live)
    if undo:
        changed = groups.remove(ctx, "blocked", list(participant_ids))
    else:
        changed = groups.add(ctx, "blocked", {p: None for p in participant_ids})
    click.echo(f"{'Unblocked' if undo else 'Blocked'} {len(changed)} participants.")


@click.command()
@directory_argument
@click.option("--no-pay", is_flag=True, help="Only the group; approve nothing.")
@api_option
@reports_errors
def qualify(directory, no_pay, api_url, live: bool) -> None:
    """After reviewing the qualification round (`study review`): approve its submissions scored
    at least [review] pay_min_score, and put the writers who passed in the study's "qualified"
    group, which a main round's draft allows alone."""
    ctx = open_account(directory, api_url, live)
    report = qualify_module.qualify(ctx, pay=not no_pay, confirm=lambda cost: confirm_spend(
        ctx, "paying the qualification round's submissions", cost))  # fmt: skip
    for submission, outcome in report.paid:
        click.echo(f"paid {submission}: {outcome}")
    click.echo(f"Qualified group: {len(report.added)} added, {len(report.removed)} removed.")
    for submission, why in report.skipped:
        click.echo(f"{submission}: skipped, {why}")
    for submission, note in report.withdrew:
        click.echo(f"{submission}: {note}")
    for submission, submission_id, why in report.unpaid:
        click.echo(f"{submission}: not paid, {why} (Prolific submission {submission_id})")
    if report.unpaid:
        ids = " ".join(submission_id for _, submission_id, _ in report.unpaid)
        click.echo(
            f"Not paid here is not decided: {len(report.unpaid)} submission(s) above are still "
            "AWAITING REVIEW on Prolific, which pays a submission once it is approved (this "
            "study's completion code asks Prolific for a manual review). Fix: study prolific "
            f"reject {directory} {ids} --message TEXT --category CATEGORY (or approve them)."
        )
    for submission, problem in report.failures:
        click.echo(f"  ! {submission}: {problem}")


@click.command("groups")
@directory_argument
@api_option
@reports_errors
def list_groups(directory, api_url, live: bool) -> None:
    """This study's participant groups and how many it put in each."""
    ctx = open_account(directory, api_url, live)
    for role in groups.ROLES:
        group_id = groups.find(ctx, role)
        click.echo(f"{role:<10} {group_id or '(not made yet)'}  {len(groups.members(ctx, role))} members")
