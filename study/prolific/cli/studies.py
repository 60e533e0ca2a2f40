"""balance, draft, publish, pause, start, stop, places, list."""

from __future__ import annotations

import click

from study.plan import launch as plan_launch
from study.prolific import ledger, money, studies, submissions
from study.prolific import settings as prolific_settings
from study.prolific.cli.common import (
    api_option,
    confirm_spend,
    directory_argument,
    open_account,
    reports_errors,
)
from study.store import reading


@click.command()
@directory_argument
@api_option
@reports_errors
def balance(directory: str, api_url: str | None, live: bool) -> None:
    """The workspace's balance and this study's budget: charged, reserved, released, committed."""
    ctx = open_account(directory, api_url, live)
    if ctx.workspace_id:
        answer = ctx.client.get(f"workspaces/{ctx.workspace_id}/balance/")
        click.echo(f"Workspace balance: {money.show(int(answer['total_balance']), ctx.currency)}, "
                   f"available {money.show(int(answer['available_balance']), ctx.currency)}.")  # fmt: skip
    with reading(ctx.engine) as connection:
        per_currency = ledger.by_currency(connection, ctx.environment)
    cap = money.show(ctx.settings.budget, ctx.currency) if ctx.settings.budget else "none"
    click.echo(f"Budget cap: {cap}.")
    if not per_currency:
        nothing = money.Cost(0, 0, ctx.currency)
        per_currency = {ctx.currency: ledger.Totals(nothing, nothing, nothing, nothing)}
    for currency, totals in per_currency.items():  # each currency's own, never summed across
        if len(per_currency) > 1:
            click.echo(f"In {money.code(currency)}:")
        for label, cost, meaning in (
            ("charged", totals.charged, "paid: approved rewards and bonuses sent"),
            ("reserved", totals.reserved, "places open, taken or awaiting review, and bonuses "
             "being sent: may still be paid"),
            ("unreserved", totals.unreserved, "submissions `sync` found with no place reserved"),
            ("released", totals.released, "reservations of places that will not be paid"),
            ("committed", totals.committed, "charged + reserved + unreserved: what the cap counts"),
        ):  # fmt: skip
            click.echo(f"  {label:<10} {cost.describe()}  ({meaning})")
        if ctx.settings.budget and currency == ctx.currency:
            left = ctx.settings.budget - totals.committed.total
            click.echo(f"  left under the cap: {money.show(max(left, 0), currency)}")


@click.command()
@directory_argument
@click.option("--places", type=int, default=None, help="Participants to recruit ([prolific] places).")
@click.option("--reward", default=None, help='Pay per place, e.g. "2.50" ([prolific] reward, else [study] pay).')
@click.option("--minutes", type=int, default=None, help="Estimated completion time ([prolific] estimated_minutes).")
@click.option("--task-url", default=None, help="The task server's /task page ([prolific] task_url).")
@click.option("--round", "round_name", default=None, help="The review round the study's URL enters.")
@click.option("--publish", "then_publish", is_flag=True, help="Publish at once (asks on live, showing the cost).")
@click.option("--force", is_flag=True, help="Draft even though the reward differs from [study] pay, the pay the consent page promises.")
@api_option
@reports_errors
def draft(directory, places, reward, minutes, task_url, round_name, then_publish, force, api_url, live: bool) -> None:
    """Create a draft Prolific study from study.toml (unpublished: nothing is paid or reserved).
    Its URL carries Prolific's URL parameters; it gets its own completion code. A reward other
    than the consent page's [study] pay is refused without --force."""
    ctx = open_account(directory, api_url, live)
    settings = ctx.settings
    if reward:
        pay = money.parse(reward, what="--reward", currency=ctx.currency)
    else:
        prolific_settings.check_currency(ctx.study, ctx.currency, reward=True)
        pay = settings.reward
    if pay is None:
        raise click.ClickException(
            'No reward: pass --reward "2.50" or set reward in [prolific] (or pay in [study]).'
        )
    wanted = studies.Draft(
        name=settings.name,
        reward=pay,
        places=places if places is not None else settings.places,
        estimated_minutes=minutes or settings.estimated_minutes,
        task_url=task_url or settings.task_url,
        round=round_name,
    )
    studies.check_draft(ctx, wanted)  # Prolific's own refusals first: they name the reward too
    if ctx.live and (problem := prolific_settings.unreachable(ctx.study, settings, wanted.task_url)):
        raise click.ClickException(f"{problem} Nothing was drafted.")
    mismatch = prolific_settings.pay_mismatch(ctx.study, pay, ctx.currency)
    if mismatch and not force:
        raise click.ClickException(
            f"{mismatch} Nothing was drafted. Fix: make them agree ([study] pay = "
            f'"{money.as_written(pay, ctx.currency)}", or [prolific] reward / --reward as the '
            "consent page says), or pass --force."
        )
    made = studies.create_draft(ctx, wanted)
    click.echo(f"Draft {made['study_id']}: {made['places']} places at "
               f"{money.show(made['reward'], ctx.currency)}; completion code {made['completion_code']}.")  # fmt: skip
    click.echo(f"  URL: {made['task_url']}")
    if then_publish:
        _publish(ctx, made["study_id"], directory)


@click.command()
@directory_argument
@click.argument("study_id")
@api_option
@reports_errors
def publish(directory: str, study_id: str, api_url: str | None, live: bool) -> None:
    """Publish a draft: its cost (Prolific's calculator, fees included) is reserved under the
    budget cap first; live asks for confirmation showing it."""
    _publish(open_account(directory, api_url, live), study_id, directory)


def _publish(ctx, study_id: str, directory: str) -> None:
    record = studies.row(ctx, study_id)
    if ctx.live and (problem := prolific_settings.unreachable(ctx.study, ctx.settings, record["task_url"])):
        raise click.ClickException(f"{problem} Nothing was published.")
    # Said before the cost is confirmed: the researcher may still stop and record the plan.
    if (note := plan_launch.note(ctx.study, ctx.engine, directory, "publishing")) is not None:
        click.echo(note, err=True)
    current = ctx.client.get(f"studies/{study_id}/")
    cost = studies.quote(ctx, record["reward"], current["total_available_places"])
    if current["status"] == "UNPUBLISHED" and not confirm_spend(ctx, f"publishing {study_id}", cost):
        raise click.ClickException("Nothing published.")
    click.echo(f"{study_id}: {studies.publish(ctx, study_id)}.")


def _transition(action: str, help_text: str):
    @click.command(action.lower(), help=help_text)
    @directory_argument
    @click.argument("study_id")
    @api_option
    @reports_errors
    def command(directory: str, study_id: str, api_url: str | None, live: bool) -> None:
        ctx = open_account(directory, api_url, live)
        click.echo(f"{study_id}: {studies.transition(ctx, study_id, action)}.")
        if action == "STOP":
            released = studies.release_places(
                ctx, study_id, keep=_working(ctx, study_id), note="the study was stopped"
            )
            click.echo(f"Released the reservation of {released} untaken places.")

    return command


def _working(ctx, study_id: str) -> int:
    """Places still taken: participants at work, and finished submissions `sync` has not yet
    bound to their place, whose reward must stay reserved for the approval."""
    found = list(ctx.client.pages(f"studies/{study_id}/submissions/"))
    with reading(ctx.engine) as connection:
        unbound = [s for s in found if s["status"] in ("AWAITING REVIEW", "APPROVED")
                   and ledger.reward_entry(connection, ctx.environment, s["id"]) is None]  # fmt: skip
    return sum(s["status"] == "ACTIVE" for s in found) + len(unbound)


pause = _transition("PAUSE", "Pause recruiting (participants already in can finish).")
start = _transition("START", "Resume recruiting a paused study.")
stop = _transition("STOP", "Stop recruiting for good; untaken places are released from the budget.")


@click.command()
@directory_argument
@click.argument("study_id")
@click.option("--places", "count", type=int, required=True, help="How many places to add.")
@api_option
@reports_errors
def places(directory: str, study_id: str, count: int, api_url: str | None, live: bool) -> None:
    """Add places to one of this study's Prolific studies (reserved under the cap first when
    it is published; re-running a crashed call finishes it rather than adding twice)."""
    ctx = open_account(directory, api_url, live)
    record = studies.row(ctx, study_id)
    cost = studies.quote(ctx, record["reward"], count)
    if not confirm_spend(ctx, f"{count} more places of {study_id}", cost):
        raise click.ClickException("Nothing added.")
    click.echo(f"{study_id}: {studies.add_places(ctx, study_id, count)} places.")


@click.command("list")
@directory_argument
@api_option
@reports_errors
def list_studies(directory: str, api_url: str | None, live: bool) -> None:
    """This study's Prolific studies (only those it created), as Prolific reports them now: status,
    places, reward, round, and how many of each one's submissions are in progress, awaiting
    review, approved, rejected, returned and timed out (a draft has none); then the total awaiting
    review."""
    ctx = open_account(directory, api_url, live)
    studies.recover(ctx)
    listed = [record for record in studies.rows(ctx) if record["study_id"]]
    waiting = 0
    for record in listed:
        current = ctx.client.get(f"studies/{record['study_id']}/")
        studies.refresh(ctx, record["study_id"], current)
        counts = submissions.by_status(ctx, record["study_id"], current["status"])
        waiting += counts["AWAITING REVIEW"]
        shown = "" if current["status"] == "UNPUBLISHED" else "  " + ", ".join(
            f"{counts[status]} {label}" for status, label in SUBMISSION_STATUSES
        )
        click.echo(f"{record['study_id']}  {current['status']:<16} "
                   f"{current.get('places_taken', 0)}/{current['total_available_places']} places  "
                   f"{money.show(record['reward'], ctx.currency)}  round {record['round'] or '-'}"
                   + shown)  # fmt: skip
    if listed:
        decide = f". Decide them with `study prolific review {directory}`." if waiting else "."
        click.echo(f"{waiting} submission(s) awaiting review in all{decide}")


# Every status Prolific documents for a submission, shown even at 0 so that one study's line
# reads like the next.
SUBMISSION_STATUSES = (
    ("ACTIVE", "in progress"),
    ("AWAITING REVIEW", "awaiting review"),
    ("APPROVED", "approved"),
    ("REJECTED", "rejected"),
    ("RETURNED", "returned"),
    ("TIMED-OUT", "timed out"),
)
