"""`study reviewers`, `study review` and `study qualify`: the qualification round's commands.

- `study reviewers add DIR NAME [--researcher]`: an account for the workspace (password asked
  twice, or read from standard input with --password-stdin); `list`, `password`, `disable`.
- `study review DIR`: the reviewers' workspace alone at http://HOST:PORT/review/ (`study serve`
  also serves it under /review).
- `study qualify DIR [--provider mturk|prolific]`: pay the qualification round's submissions
  and gate the main round on the writers who passed, on the provider the round ran on
  (study.providers): MTurk grants the study's qualification (study.mturk.qualify), Prolific
  fills the study's "qualified" participant group (study.prolific.qualify).
"""

from __future__ import annotations

import sys

import click

from study import config as study_config
from study import providers
from study.review import accounts
from study.review import qualify as review_qualify
from study.review import settings as review_settings
from study.store import create_tables, make_engine, reading, writing
from study.cli_options import directory_argument


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
    """Stop NAME from logging in (their ratings stay; submissions they hold unrated go to others)."""
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
@click.option("--port", default=5001, show_default=True, type=click.IntRange(1, 65535))
@click.option("--threads", default=8, show_default=True, type=int, help="Worker threads.")
def review(directory: str, host: str, port: int, threads: int) -> None:
    """Serve the reviewers' workspace for the study in DIRECTORY."""
    import waitress

    from study.review.web import create_review_app

    from study.serve import listenable
    from study.server.proxy import ProxyConfigError, waitress_options

    study = _reviewed_study(directory)
    listenable(host, port)  # in words, not waitress's traceback (5001 may be another program's)
    try:
        app = create_review_app(study)
    except ProxyConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Reviewers' workspace for '{study.name}' on http://{host}:{port}/review/")
    waitress.serve(
        app, host=host, port=port, threads=threads, ident="study-review", _quiet=True,
        **waitress_options(app.config["STUDY_TRUSTED_PROXIES"]),
    )  # fmt: skip


# -- into the provider ------------------------------------------------------------------------


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@directory_argument
@click.option("--provider", type=click.Choice(providers.names()), default=None,
              help="The provider the qualification round ran on (default: the one whose "
              "submissions the study's database holds).")
@click.pass_context
def qualify(context: click.Context, directory: str, provider: str | None) -> None:
    """Pay the qualification round's submissions through the ledger and let the writers who
    passed into the main round, on the provider the round ran on. Safe to re-run: nobody is
    paid or told twice. The options after DIRECTORY are the provider's:

    \b
    MTurk: grants the study's qualification (value: the score); --notify, --message TEXT,
      --subject TEXT, --pay/--no-pay, --dry-run, --sandbox/--live, --endpoint-url URL.
      Undo a grant with `study mturk qual revoke DIR NAME WORKER`.
    Prolific: fills the study's "qualified" participant group, as `study prolific qualify`;
      --no-pay, --api-url URL, --live."""
    study = _reviewed_study(directory)
    engine = _engine(study)
    try:
        with reading(engine) as connection:
            name = provider or providers.qualification_provider(connection)
            synced = providers.providers_with_submissions(connection)
        lab = None if provider or synced else review_qualify.lab_round(study, engine)
        waiting = review_qualify.undecided(study, engine)
    except providers.WhichProvider as error:
        raise click.ClickException(str(error)) from None
    finally:
        engine.dispose()
    if waiting:
        # Said first, so a run that ends in failures says it too: a clean "0 failures" summary
        # must not read as "every writer is dealt with" while some wait for reviewers.
        counts = ", ".join(f"{status} {count}" for status, count in sorted(waiting.items()))
        click.echo(
            f"Not decided yet: {waiting.total()} submission(s) ({counts}), neither paid nor let "
            "into the main round by this run. Fix: finish them in the workspace (Outcomes & "
            f"agreement), then run `study qualify {directory}` again."
        )
        unasked = None if lab is not None else providers.provider_for(name).pays_by_itself(study)
        if unasked:
            click.echo(unasked)
    if lab is not None:
        _lab_round_said(study, directory, lab)
        return
    command = providers.provider_for(name).qualify_command()
    with command.make_context(f"study qualify --provider {name}", [directory, *context.args],
                              parent=context) as chosen:  # fmt: skip
        command.invoke(chosen)


def _lab_round_said(study: study_config.Study, directory: str, outcomes) -> None:
    """A round whose writers all entered with access codes: nothing to pay or grant here."""
    main = next((r.name for r in review_settings.from_study(study).rounds if r.requires), "")
    counts = ", ".join(f"{status} {count}" for status, count in sorted(outcomes.items()))
    link = f"/task?access_code=THEIR-CODE&round={main}" if main else "/task?access_code=THEIR-CODE"
    click.echo(
        f"Every writer of '{study.name}' entered with an access code ({counts}): no MTurk or "
        "Prolific submission to pay and no qualification to grant, so nothing was asked of "
        "either. The task server already admits the writers who passed, and only them, into "
        f"the main round: hand each their link, {link} (pay lab writers as you agreed with them). "
        "A round that ran on MTurk or Prolific: sync its submissions first (`study mturk sync "
        f"{directory}` or `study prolific sync {directory}`), or name it with --provider."
    )
