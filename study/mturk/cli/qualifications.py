"""qual create, grant, revoke, list."""

from __future__ import annotations

import click

from study.mturk import qualifications as qual_module
from study.mturk.cli.common import (
    account_options,
    directory_argument,
    open_account,
    reports_errors,
)


@click.group()
def qual() -> None:
    """Qualification types: e.g. who passed the qualification round (paper App. D)."""


@qual.command()
@directory_argument
@click.argument("name")
@click.option("--description", required=True, help="What holding it means; workers see it.")
@click.option("--keywords", default="", help="Comma-separated search words.")
@account_options
@reports_errors
def create(directory, name, description, keywords, sandbox, endpoint_url) -> None:
    """Create a qualification type NAME (one per environment: sandbox and live ids differ)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    type_id = qual_module.create(ctx.requester, ctx.engine, name, description, keywords=keywords)
    click.echo(f"{name}: {type_id}")


@qual.command()
@directory_argument
@click.argument("name")
@click.argument("worker_ids", nargs=-1, required=True)
@click.option("--value", default=1, show_default=True, type=int, help="The score to give.")
@click.option("--notify", is_flag=True, help="Let MTurk email the workers about it.")
@account_options
@reports_errors
def grant(directory, name, worker_ids, value, notify, sandbox, endpoint_url) -> None:
    """Give workers the qualification NAME (a name from `qual create`, or a type id)."""
    ctx = open_account(directory, sandbox, endpoint_url)
    type_id = qual_module.resolve(ctx.engine, ctx.environment, name)
    qual_module.grant(ctx.requester, type_id, list(worker_ids), value=value, notify=notify)
    click.echo(f"Granted {name} to {len(worker_ids)} workers.")


@qual.command()
@directory_argument
@click.argument("name")
@click.argument("worker_ids", nargs=-1, required=True)
@click.option("--reason", default="", help="The workers see this.")
@account_options
@reports_errors
def revoke(directory, name, worker_ids, reason, sandbox, endpoint_url) -> None:
    """Take the qualification NAME away from workers."""
    ctx = open_account(directory, sandbox, endpoint_url)
    type_id = qual_module.resolve(ctx.engine, ctx.environment, name)
    missing = qual_module.revoke(ctx.requester, type_id, list(worker_ids), reason=reason)
    click.echo(f"Revoked {name} from {len(worker_ids) - len(missing)} workers.")
    for worker_id in missing:
        click.echo(f"  {worker_id} did not hold it.", err=True)


@qual.command("list")
@directory_argument
@click.argument("name", required=False)
@account_options
@reports_errors
def list_(directory, name, sandbox, endpoint_url) -> None:
    """Your qualification types; with NAME, the workers who hold it."""
    ctx = open_account(directory, sandbox, endpoint_url)
    if name:
        type_id = qual_module.resolve(ctx.engine, ctx.environment, name)
        for held in qual_module.holders(ctx.requester, type_id):
            click.echo(f"{held['WorkerId']}  value {held.get('IntegerValue', '-')}")
        return
    for found in qual_module.list_types(ctx.requester, ctx.engine):
        role = f"  [{found['StudyRole']}]" if found["StudyRole"] else ""
        click.echo(f"{found['QualificationTypeId']}  {found['Name']}{role}")
