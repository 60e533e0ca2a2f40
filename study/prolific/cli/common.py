"""What every `study prolific` command shares: the connection, errors, confirmations."""

from __future__ import annotations


import click

from study import config as study_config
from study.prolific import client, groups, ledger, messages, money, payments, settings, studies
from study.prolific.context import Context, open_context
from study.cli_options import directory_argument, reports  # noqa: F401 - directory_argument: for the commands

# Errors a researcher can act on: one clear message, never a traceback.
EXPECTED = (
    client.ProlificError,
    client.NoToken,
    ledger.BudgetExceeded,
    studies.StudyError,
    payments.BonusError,
    groups.GroupError,
    messages.MessageError,
    settings.SettingsError,
    money.MoneyError,
    study_config.ConfigError,
    ValueError,
)


def api_option(command):
    """--api-url and --live, on every command that talks to Prolific."""
    command = click.option(
        "--live",
        is_flag=True,
        help="Talk to Prolific itself (real money). Prolific has no sandbox: without --live only a "
        "local address (`study prolific emulate`) is used.",
    )(command)
    return click.option(
        "--api-url",
        default=None,
        metavar="URL",
        help="Prolific's API address (default: PROLIFIC_API_URL, else https://api.prolific.com/"
        "api/v1/), e.g. a local `study prolific emulate`. The token comes from PROLIFIC_TOKEN.",
    )(command)


reports_errors = reports(EXPECTED)


def open_account(directory: str, api_url: str | None, live: bool = False) -> Context:
    study = study_config.load(directory)
    if not study.id:
        raise study_config.ConfigError(study_config.missing_id_message(study))
    connection = client.connect(api_url)
    if not connection.emulated and not live:
        raise client.NoToken(
            f"{connection.base_url} is Prolific itself: every call may spend real money. Fix: "
            "pass --live, or point --api-url (or PROLIFIC_API_URL) at `study prolific emulate`."
        )
    ctx = open_context(study, settings.from_study(study), connection)
    where = "LIVE (real money)" if ctx.live else "a local emulator"
    click.echo(f"Prolific, {where} at {ctx.client.base_url}; study '{study.name}'.", err=True)
    return ctx


def confirm_spend(ctx: Context, what: str, cost: money.Cost | money.Costs) -> bool:
    """Live always asks, showing the cost (no flag skips it); the emulator just says it."""
    if not ctx.live:
        click.echo(f"{what}: up to {cost.describe()} (emulator money).")
        return True
    return click.confirm(
        f"LIVE: {what} will cost up to {cost.describe()} of real money{_room(ctx)}. Continue?", default=False
    )


def _room(ctx: Context) -> str:
    """What is left under the budget cap, said before the researcher confirms: the check itself
    comes after (study.prolific.ledger.check_budget, in the spend's own transaction), so a spend
    past the cap is refused once confirmed, and seeing the room first spares the surprise."""
    cap = ctx.settings.budget
    if cap is None:
        return ""
    from study.store import reading

    with reading(ctx.engine) as connection:
        committed = ledger.totals(connection, ctx.environment, ctx.currency).committed.total
    left = money.show(max(cap - committed, 0), ctx.currency)
    return f" ({left} left under the {money.show(cap, ctx.currency)} budget cap)"
