"""notify, block."""

from __future__ import annotations

import click

from study.mturk import assignments
from study.mturk import workers as worker_module
from study.mturk.cli.common import (
    account_options,
    directory_argument,
    open_account,
    reports_errors,
)


@click.command()
@directory_argument
@click.argument("worker_ids", nargs=-1)
@click.option(
    "--all-workers", is_flag=True, help="Every worker with an assignment in this study (as synced)."
)
@click.option("--subject", required=True, help="At most 200 characters.")
@click.option("--message", required=True, help="At most 4096 characters.")
@account_options
@reports_errors
def notify(directory, worker_ids, all_workers, subject, message, sandbox, endpoint_url) -> None:
    """Email workers (MTurk only emails workers whose work you approved or rejected)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    chosen = list(worker_ids)
    if all_workers:
        chosen += [row["worker_id"] for row in assignments.stored(ctx)]
    if not chosen:
        raise click.ClickException("Name the workers or pass --all-workers.")
    failures = worker_module.notify(ctx, chosen, subject, message)
    sent = len(set(chosen)) - len(failures)
    click.echo(f"Sent to {sent} workers.")
    for worker_id, reason in failures.items():
        click.echo(f"  not sent to {worker_id}: {reason}", err=True)


@click.command()
@directory_argument
@click.argument("worker_id")
@click.option("--reason", required=True, help="For your records; the worker does not see it.")
@click.option("--undo", is_flag=True, help="Remove the block instead.")
@account_options
@reports_errors
def block(directory, worker_id, reason, undo, sandbox, endpoint_url) -> None:
    """Block a worker from all of your HITs (or --undo it)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    if undo:
        worker_module.unblock(ctx, worker_id, reason)
        click.echo(f"Unblocked {worker_id}.")
    else:
        worker_module.block(ctx, worker_id, reason)
        click.echo(f"Blocked {worker_id}.")
