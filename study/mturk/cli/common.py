"""What every `study mturk` command shares: choosing the account, errors, confirmations."""

from __future__ import annotations


import click

from study import config as study_config
from study.mturk import (
    bonuses,
    budget,
    client,
    hits,
    money,
    qualifications,
    settings,
    validate,
)
from study.mturk.context import Context, open_context
from study.cli_options import directory_argument, reports  # noqa: F401 - directory_argument: for the commands

# Errors a researcher can act on: shown as one clear message, never as a traceback.
EXPECTED = (
    client.MTurkError,
    client.NoCredentials,
    validate.InvalidRequest,
    hits.HitError,
    budget.BudgetExceeded,
    qualifications.QualificationError,
    bonuses.BonusError,
    settings.SettingsError,
    money.MoneyError,
    study_config.ConfigError,
    ValueError,
)


def account_options(command):
    """--sandbox (default) / --live and --endpoint-url, on every command that talks to MTurk."""
    command = click.option(
        "--endpoint-url",
        default=None,
        metavar="URL",
        help="Send requests here instead of MTurk, e.g. a local `study mturk emulate`.",
    )(command)
    command = click.option(
        "--sandbox/--live",
        "sandbox",
        default=True,
        show_default=True,
        help="The sandbox (free, fake workers) or the live marketplace (real money).",
    )(command)
    return command


reports_errors = reports(EXPECTED)


def open_account(
    directory: str, sandbox: bool, endpoint_url: str | None, study: study_config.Study | None = None
) -> Context:
    study = study or load_study(directory)
    requester = client.connect(live=not sandbox, endpoint_url=endpoint_url)
    ctx = open_context(study, settings.from_study(study), requester)
    where = "LIVE marketplace (real money)" if ctx.live else "sandbox"
    if endpoint_url:
        where += f" at {endpoint_url}"
    click.echo(f"MTurk {where}; study '{study.name}'.", err=True)
    return ctx


def load_study(directory: str) -> study_config.Study:
    """The study, with the id every MTurk command matches its HITs by (study.mturk.posting)."""
    study = study_config.load(directory)
    if not study.id:
        raise study_config.ConfigError(study_config.missing_id_message(study))
    return study


def confirm_spend(ctx: Context, what: str, cost: money.Cost) -> bool:
    """Live mode always asks, showing the cost (no flag skips it); the sandbox just says it."""
    if not ctx.live:
        click.echo(f"{what}: up to {cost.describe()} (sandbox money).")
        return True
    return click.confirm(
        f"LIVE: {what} will cost up to {cost.describe()} of real money. Continue?", default=False
    )
