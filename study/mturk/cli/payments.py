"""bonus, ledger."""

from __future__ import annotations

import datetime as dt

import click

from study.mturk import bonuses, budget, ledger, money
from study.mturk.cli.common import (
    account_options,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)
from study.store import reading


@click.command()
@directory_argument
@click.argument("assignment_id")
@click.option("--amount", required=True, metavar="USD", help='The bonus, e.g. "1.00".')
@click.option("--reason", required=True, help="Why: the worker sees this with the payment.")
@click.option(
    "--again",
    is_flag=True,
    help="Pay once more, on purpose, a bonus for a reason this assignment was already paid "
    "a bonus for (the same amount or another).",
)
@account_options
@reports_errors
def bonus(directory, assignment_id, amount, reason, again, sandbox, endpoint_url) -> None:
    """Pay a bonus to the worker of an assignment, exactly once: re-running the same command
    (after a crash, a timeout, or by mistake) never pays twice."""
    ctx = open_account(directory, sandbox, endpoint_url)
    value = money.parse_usd(amount, what="--amount")
    outcome = bonuses.pay(
        ctx,
        assignment_id,
        value,
        reason,
        repeat=again,
        confirm=lambda cost, status: confirm_spend(
            ctx, f"a bonus for {assignment_id}{_rejected(status)}", cost
        ),
    )
    messages = {
        "paid": f"Paid {money.show(value)} (+{money.show(outcome.cost.fees)} fee) for "
        f"{assignment_id}{_rejected(outcome.assignment_status)}.",
        "already paid": f"Already paid: this bonus for {assignment_id} is in the ledger as confirmed. "
        "Use --again to pay an identical bonus once more.",
        "found paid": f"MTurk had already paid this bonus for {assignment_id} (an earlier run did not "
        "finish); the ledger is now up to date. Nothing was paid twice.",
        "declined": "Nothing paid.",
    }
    click.echo(messages[outcome.status])


def _rejected(status: str) -> str:
    """Said with a bonus for a rejected assignment: MTurk pays it (some researchers pay for
    partial work), and the researcher should know it goes to work they rejected."""
    if status != "Rejected":
        return ""
    return ", an assignment you REJECTED (MTurk pays it all the same)"


@click.command("ledger")
@directory_argument
@account_options
@reports_errors
def ledger_command(directory, sandbox, endpoint_url) -> None:
    """Every payment this study intended, made or cancelled in this environment."""
    ctx = open_account(directory, sandbox, endpoint_url)
    with reading(ctx.engine) as connection:
        rows = ledger.entries(connection, ctx.environment)
        totals = budget.totals(connection, ctx.environment)
    for row in rows:
        when = dt.datetime.fromtimestamp(row["created_at"], dt.timezone.utc)
        click.echo(
            f"{when:%Y-%m-%d %H:%M}  {row['kind']:<6} {row['status']:<9} "
            f"${row['amount']:>7} +${row['fee']:>5} fee  "
            f"HIT {row['hit_id'] or '-'}  assignment {row['assignment_id'] or '-'}"
            + (f"  ({row['note']})" if row["note"] else "")
        )
    click.echo(f"Committed {totals.committed.describe()}; paid {totals.paid.describe()}.")
