"""`study reviewers`, `study review` and `study qualify`: the qualification round's commands.

- `study reviewers add DIR NAME [--researcher]`: an account for the workspace (password asked
  twice, or read from standard input with --password-stdin); `list`, `password`, `disable`.
- `study review DIR`: the reviewers' workspace alone at http://HOST:PORT/review/ (`study serve`
  also serves it under /review).
- `study qualify DIR`: pay the qualification HITs and grant the study's MTurk qualification to
  writers who passed (study.review.qualify); --dry-run shows what it would do.
"""

from __future__ import annotations

import sys

import click

from study import config as study_config
from study.mturk.cli.common import (
    account_options,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)
from study.review import accounts
from study.review import settings as review_settings
from study.store import create_tables, make_engine, reading, writing


def _study(directory: str) -> study_config.Study:
    try:
        study = study_config.load(directory)
        review_settings.from_study(study)  # reports [[rounds]] and [review] problems now
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    return study


def _reviewed_study(directory: str) -> study_config.Study:
    study = _study(directory)
    if study.paradigm != "writing":  # a paradigm's own path (a chat study's conversations)
        raise click.ClickException(
            f"{directory} is a {study.paradigm} study: the reviewers' workspace and study qualify "
            "rate writing sessions (CoAuthor's qualification round), which it has none of. Review "
            "its HITs with `study mturk review`."
        )
    return study


def _engine(study: study_config.Study):
    engine = make_engine(study.database_url)
    create_tables(engine)
    return engine


def _password(stdin: bool) -> str:
    if stdin:
        return sys.stdin.readline().rstrip("\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


# -- reviewers --------------------------------------------------------------------------------


@click.group()
def reviewers() -> None:
    """Accounts of the reviewers' workspace (`study review`, or /review of `study serve`)."""


@reviewers.command()
@directory_argument
@click.argument("name")
@click.option(
    "--researcher",
    is_flag=True,
    help="May adjudicate and see every rating, agreement and the audit log.",
)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def add(directory: str, name: str, researcher: bool, password_stdin: bool) -> None:
    """Create the account NAME (a password of at least 10 characters, stored salted and hashed)."""
    engine = _engine(_study(directory))
    password = _password(password_stdin)
    try:
        with writing(engine) as connection:
            accounts.add(
                connection, name, password, role="researcher" if researcher else "reviewer"
            )
    except accounts.AccountError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Added {'researcher' if researcher else 'reviewer'} {name}.")


@reviewers.command("list")
@directory_argument
def list_accounts(directory: str) -> None:
    """The accounts, their roles and whether they may log in."""
    engine = _engine(_study(directory))
    with reading(engine) as connection:
        found = accounts.all_accounts(connection)
    if not found:
        click.echo("No accounts yet. Add one with: study reviewers add DIR NAME")
    for account in found:
        state = "" if account["active"] else "  (disabled)"
        click.echo(f"{account['name']}  {account['role']}{state}")


@reviewers.command()
@directory_argument
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def password(directory: str, name: str, password_stdin: bool) -> None:
    """Set a new password for NAME (and enable the account again)."""
    engine = _engine(_study(directory))
    try:
        with writing(engine) as connection:
            accounts.set_password(connection, name, _password(password_stdin))
    except accounts.AccountError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"New password set for {name}.")


@reviewers.command()
@directory_argument
@click.argument("name")
def disable(directory: str, name: str) -> None:
    """Stop NAME from logging in (their ratings stay)."""
    engine = _engine(_study(directory))
    try:
        with writing(engine) as connection:
            accounts.disable(connection, name)
    except accounts.AccountError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Disabled {name}.")


# -- the workspace ----------------------------------------------------------------------------


@click.command()
@directory_argument
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=5001, show_default=True, type=int)
@click.option("--threads", default=8, show_default=True, type=int, help="Worker threads.")
def review(directory: str, host: str, port: int, threads: int) -> None:
    """Serve the reviewers' workspace for the study in DIRECTORY."""
    import waitress

    from study.review.web import create_review_app

    from study.server.proxy import ProxyConfigError, waitress_options

    study = _reviewed_study(directory)
    try:
        app = create_review_app(study)
    except ProxyConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Reviewers' workspace for '{study.name}' on http://{host}:{port}/review/")
    waitress.serve(
        app, host=host, port=port, threads=threads, ident="study-review", _quiet=True,
        **waitress_options(app.config["STUDY_TRUSTED_PROXIES"]),
    )  # fmt: skip


# -- into MTurk -------------------------------------------------------------------------------


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
    from study.review import qualify as qualify_module

    _reviewed_study(directory)
    ctx = open_account(directory, sandbox, endpoint_url)
    settings = review_settings.from_study(ctx.study)
    if dry_run:
        chosen = qualify_module.candidates(ctx)
        due = {c.submission_id for c in qualify_module.to_pay(ctx, chosen)} if pay else set()
        for candidate in chosen:
            outcome = candidate.judged.outcome
            action = "grant" if outcome.passed and candidate.worker_id else "-"
            paying = "pay" if candidate.submission_id in due else "-"
            click.echo(
                f"{candidate.submission_id}  {candidate.worker_id or '(lab)'}  {outcome.status}"
                f"  score {outcome.score if outcome.score is not None else '-'}  {action}  {paying}"
            )
        return
    report = qualify_module.qualify(
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
