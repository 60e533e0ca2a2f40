"""bonus, ledger."""

from __future__ import annotations

import datetime as dt

import click

from study.prolific import ledger, money, payments, totals
from study.prolific.cli.common import (
    api_option,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)
from study.store import reading, writing


@click.command()
@directory_argument
@click.argument("submission_id")
@click.option("--amount", required=True, help='The bonus in the workspace currency, e.g. "1.00".')
@click.option("--reason", required=True, help="Why (kept in the ledger; it keys the bonus).")
@click.option("--again", is_flag=True, help="Pay an identical bonus once more on purpose.")
@click.option("--abandon-unsettled", is_flag=True,
              help="Only after checking on Prolific's website that an earlier, unanswered pay "
              "call never paid: give it up and pay through a new bulk payment.")
@api_option
@reports_errors
def bonus(directory, submission_id, amount, reason, again, abandon_unsettled, api_url, live: bool) -> None:
    """Pay a bonus to the participant of a submission, exactly once: re-running the same command
    (after a crash, a lost answer, or by mistake) never sends Prolific's pay call twice."""
    ctx = open_account(directory, api_url, live)
    value = money.parse(amount, what="--amount", currency=ctx.currency)
    outcome = payments.pay(
        ctx, submission_id, value, reason, repeat=again, abandon=abandon_unsettled,
        confirm=lambda cost, status: confirm_spend(ctx, f"a bonus for {submission_id}{_rejected(status)}", cost),
    )  # fmt: skip
    shown = money.show(value, ctx.currency)
    messages = {
        "paid": f"Paid {shown} (+{money.show(outcome.cost.fees, outcome.cost.currency)} fees) for "
        f"{submission_id}{_rejected(outcome.submission_status)}; Prolific settles it within minutes.",
        "already paid": f"Already paid: this bonus for {submission_id} is confirmed in the ledger. "
        "Use --again to pay an identical bonus once more.",
        "found paid": f"Prolific had already paid this bonus for {submission_id} (an earlier run did "
        "not hear back); the ledger is now up to date. Nothing was paid twice.",
        "pending": f"An earlier run sent the pay call for this bonus and heard no answer; Prolific "
        "does not show it paid yet (bonuses settle within minutes). Nothing was sent again: run "
        "this command later. If Prolific's website shows it was never paid, use --abandon-unsettled.",
        "declined": "Nothing paid.",
    }
    click.echo(messages[outcome.status])


def _rejected(status: str) -> str:
    """Said with a bonus to a rejected submission: Prolific pays it (some researchers pay for
    partial work), and the researcher should know it goes to work they rejected."""
    return ", a submission you REJECTED (Prolific pays it all the same)" if status == "REJECTED" else ""


@click.command("ledger")
@directory_argument
@click.option("--all", "every_entry", is_flag=True,
              help="Every entry on a line of its own, each reward place with its submission "
              "(by default a study's places are grouped by status, with their count and sum).")
@click.option("--earlier-currency", metavar="CODE", default=None,
              help="The currency (e.g. GBP), as Prolific's invoices show it, of the entries "
              "written before entries recorded theirs; until stated, they show as unknown and "
              "no new spending is allowed.")
@api_option
@reports_errors
def ledger_command(directory, every_entry, earlier_currency, api_url, live: bool) -> None:
    """Every payment this study intended, made or cancelled on Prolific, each in its currency:
    a study's reward places grouped by status, bonuses and unreserved submissions each on
    their own line (--all: every entry)."""
    ctx = open_account(directory, api_url, live)
    if earlier_currency:
        with writing(ctx.engine) as connection:
            stated = ledger.state_earlier_currency(connection, ctx.environment, earlier_currency)
        click.echo(f"{stated} entries of unknown currency are now in {earlier_currency.upper()}." if stated
                   else "No entry is of unknown currency: every one already says its own; nothing was recorded.")
    with reading(ctx.engine) as connection:
        rows = ledger.entries(connection, ctx.environment)
        per_currency = ledger.by_currency(connection, ctx.environment)
    for item in rows if every_entry else totals.grouped(rows):
        click.echo(_group_line(item) if isinstance(item, totals.Group) else _entry_line(item))
    if not per_currency:
        nothing = money.Cost(0, 0, ctx.currency)
        per_currency = {ctx.currency: ledger.Totals(nothing, nothing, nothing, nothing)}
    for currency, sums in per_currency.items():  # never summed across currencies
        click.echo(f"{money.code(currency)}: committed {sums.committed.describe()}; "
                   f"paid {sums.charged.describe()}.")  # fmt: skip


def _entry_line(row: dict) -> str:
    when = dt.datetime.fromtimestamp(row["created_at"], dt.timezone.utc)
    return (
        f"{when:%Y-%m-%d %H:%M}  {row['kind']:<6} {row['status']:<10} "
        f"{money.code(row['currency']):<7} {money.show(row['amount'], row['currency']):>8} "
        f"+{money.show(row['fee'], row['currency']):>7} fees  "
        f"study {row['study_id'] or '-'}  submission {row['submission_id'] or '-'}"
        + (f"  ({row['note']})" if row["note"] else "")
    )


def _group_line(group: totals.Group) -> str:
    """`5 x $2.50 +$0.83 fees = $16.65`: each place's charge as Prolific's invoice lists it."""
    first, currency = group.first, group.first["currency"]
    when = dt.datetime.fromtimestamp(first["created_at"], dt.timezone.utc)
    return (
        f"{when:%Y-%m-%d %H:%M}  {'reward':<6} {first['status']:<10} {money.code(currency):<7} "
        f"{len(group.entries)} x {money.show(first['amount'], currency)} "
        f"+{money.show(first['fee'], currency)} fees = {money.show(group.cost.total, currency)}  "
        f"study {first['study_id'] or '-'}  ({len(group.entries)} places"
        + (f"; {first['note']})" if first["note"] else ")")
    )
