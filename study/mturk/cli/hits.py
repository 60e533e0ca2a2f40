"""balance, post, list, extend, expire, delete."""

from __future__ import annotations

from collections.abc import Callable

import click

from study import config as study_config
from study import config_texts
from study.mturk import hit_actions
from study.mturk import hits as hit_module
from study.mturk import budget, client, money, posting, settings
from study.mturk.cli.common import (
    account_options,
    confirm_spend,
    directory_argument,
    load_study,
    open_account,
    reports_errors,
)
from study.plan import launch as plan_launch
from study.store import reading

WORKER_SITES = {"sandbox": "https://workersandbox.mturk.com", "live": "https://worker.mturk.com"}


@click.command()
@directory_argument
@account_options
@reports_errors
def balance(directory: str, sandbox: bool, endpoint_url: str | None) -> None:
    """The account's balance, and this study's budget: charged, reserved, released."""
    ctx = open_account(directory, sandbox, endpoint_url)
    response = ctx.requester.call("GetAccountBalance")
    with reading(ctx.engine) as connection:
        totals = budget.totals(connection, ctx.environment)
    click.echo(
        f"Available: ${response['AvailableBalance']}  (on hold: ${response.get('OnHoldBalance', '0.00')})"
    )
    click.echo(f"This study in {ctx.environment}:")
    click.echo(f"  charged   {totals.charged.describe()}  (paid by MTurk)")
    click.echo(
        f"  reserved  {totals.reserved.describe()}  (open assignments, submissions awaiting "
        "review, bonuses being sent: may still be spent)"
    )
    if totals.unreserved.total:
        click.echo(
            f"  not reserved  {totals.unreserved.describe()}  (submissions `sync` found with no "
            "reservation: approving them checks the cap first)"
        )
    click.echo(
        f"  released  {totals.released.describe()}  (reservations that will not be paid: "
        "rejections, assignments of closed or deleted HITs nobody took)"
    )
    spendable = totals.reserved + totals.unreserved
    click.echo(
        f"  committed {money.show(totals.committed.total)} = charged "
        f"{money.show(totals.charged.total)} + still spendable {money.show(spendable.total)}"
    )
    cap = ctx.settings.budget
    click.echo(f"Budget cap: {money.show(cap) if cap is not None else 'none'}" + _room(cap, totals))


def _room(cap, totals: budget.Totals) -> str:
    if cap is None:
        return ""
    left = cap - totals.committed.total
    if left >= 0:
        return f" ({money.show(left)} left)"
    # Only money MTurk pays whatever the cap says takes the books past it: submissions on
    # assignments added outside this tool, or approved on the requester website.
    return (
        f" (over by {money.show(-left)}: MTurk has paid or may pay submissions no reservation "
        "covered; nothing new is reserved until the books are under the cap. Fix: raise budget "
        "in [mturk] of study.toml)"
    )


@click.command()
@directory_argument
@click.option(
    "--hits", "count", default=1, show_default=True, type=click.IntRange(1), help="How many HITs."
)
@click.option(
    "--assignments",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Assignments per HIT: how many different workers may do each HIT.",
)
@click.option(
    "--reward", default=None, metavar="USD", help="Pay per assignment (default: [mturk] reward)."
)
@click.option(
    "--task-url",
    default=None,
    metavar="URL",
    help="The https address of the task server's /task page (default: [mturk] task_url).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Post even though the HIT's reward differs from the pay the consent page shows.",
)
@account_options
@reports_errors
def post(directory, count, assignments, reward, task_url, force, sandbox, endpoint_url) -> None:
    """Create the HIT type and HITs whose ExternalQuestion opens the study's /task page,
    with the paper's requirements (approval > 97%, US, > 10000 approved HITs) and the study's
    own qualifications. Re-running after a crash finishes the interrupted post instead."""
    # Mistakes are explained before anything is sent, to MTurk or to AWS.
    study = load_study(directory)
    mturk_settings = settings.from_study(study)
    amount = money.parse_usd(reward, what="--reward") if reward else mturk_settings.reward
    if amount is None:
        raise click.ClickException(
            "No reward: pass --reward 2.50 or set reward in [mturk] of study.toml."
        )
    url = hit_module.check_task_url(
        task_url or mturk_settings.task_url, allow_http=client.is_dry_run(endpoint_url)
    )
    mismatch = posting.pay_mismatch(study, amount)
    if mismatch and not force:
        raise click.ClickException(mismatch + " Fix: make them agree, or pass --force.")
    if mismatch:
        click.echo(f"Warning: {mismatch}", err=True)
    unfinished = config_texts.unfinished_consent(study)
    if unfinished:
        # A warning, not a refusal: the HITs may be posted before the server is up, and `study
        # serve` (and `study release build`) refuse the placeholder anyway.
        click.echo(f"Warning: {directory}: `study serve` will not start, so workers who accept "
                   f"would find no study: {unfinished}", err=True)  # fmt: skip
    ctx = open_account(directory, sandbox, endpoint_url, study)
    if (note := plan_launch.note(study, ctx.engine, directory)) is not None:
        click.echo(note, err=True)
    posted = posting.post(
        ctx,
        hits=count,
        assignments=assignments,
        reward=amount,
        task_url=url,
        confirm=lambda cost: confirm_spend(
            ctx, f"posting {count} HITs x {assignments} assignments", cost
        ),
    )
    if posted is None:
        raise click.ClickException("Nothing posted.")
    if posted.resumed:
        click.echo(
            f"Finished {len(posted.hits)} HITs an interrupted post had planned; nothing new was "
            "posted. Run post again to post more."
        )
    site = WORKER_SITES["live" if ctx.live else "sandbox"]
    for row in posted.hits:
        hit = row["HIT"]
        # A local `study mturk emulate` holds the HIT, not MTurk's worker site: its own page
        # lists every HIT to accept.
        where = (f"{endpoint_url.rstrip('/')}/" if endpoint_url and client.is_loopback(endpoint_url)
                 else f"{site}/projects/{hit['HITGroupId']}/tasks")  # fmt: skip
        click.echo(f"{hit['HITId']}  {hit['MaxAssignments']} x ${hit['Reward']}  {where}")
    click.echo(f"Posted {len(posted.hits)} HITs; at most {posted.cost.describe()}.")


@click.command("list")
@directory_argument
@account_options
@reports_errors
def list_hits(directory: str, sandbox: bool, endpoint_url: str | None) -> None:
    """This study's HITs: status, assignments available / in progress / submitted and awaiting
    review / reviewed, expiry; and when MTurk auto-approves the earliest submission waiting."""
    ctx = open_account(directory, sandbox, endpoint_url)
    rows = hit_module.study_hits(ctx)
    if not rows:
        click.echo(f"No HITs in {ctx.environment} yet; post some with `study mturk post`.")
    waiting: list[dict] = []
    commands: set[str] = set()
    for row in rows:
        hit = row.get("HIT")
        if hit is None:
            click.echo(f"{row['hit_id']}  {row['status']}")
            continue
        submitted = hit_module.awaiting_review(ctx, hit)
        waiting += submitted
        if submitted:
            commands.add("study judging review" if hit_module.is_judging(row) else "study mturk review")
        click.echo(
            f"{hit['HITId']}  {hit['HITStatus']:<12} max {hit['MaxAssignments']}: "
            f"{hit['NumberOfAssignmentsAvailable']} available, {hit['NumberOfAssignmentsPending']} "
            f"in progress, {len(submitted)} awaiting review, "
            f"{hit['NumberOfAssignmentsCompleted']} reviewed  expires {hit_module.utc_text(hit['Expiration'])}"
            + _first_auto_approval(submitted, "  ")
        )
    if rows:
        click.echo(
            f"{len(waiting)} submission(s) awaiting review in all"
            + _first_auto_approval(waiting, "; ")
            + (". Decide them with " if commands else "")
            + " or ".join(f"`{c} {directory}`" for c in sorted(commands, reverse=True))
            + "."
        )


def _first_auto_approval(submitted: list[dict], separator: str) -> str:
    """When MTurk approves and pays the earliest of `submitted` by itself, if it says."""
    times = [a["AutoApprovalTime"] for a in submitted if a.get("AutoApprovalTime") is not None]
    if not times:
        return ""
    first = min(times, key=hit_module.epoch)
    return f"{separator}MTurk auto-approves (pays) the first at {hit_module.utc_text(first)}"


@click.command()
@directory_argument
@click.argument("hit_id")
@click.option(
    "--assignments", "more", default=0, type=click.IntRange(0), help="Assignments to add."
)
@click.option(
    "--hours",
    default=0.0,
    type=click.FloatRange(0),
    help="Keep the HIT open at least this many hours from now (never shortens it).",
)
@account_options
@reports_errors
def extend(directory, hit_id, more, hours, sandbox, endpoint_url) -> None:
    """Add assignments to a HIT and/or keep it open longer."""
    if not more and not hours:
        raise click.ClickException("Say what to extend: --assignments N and/or --hours H.")
    ctx = open_account(directory, sandbox, endpoint_url)
    done = hit_actions.extend(
        ctx,
        hit_id,
        more=more,
        hours=hours,
        confirm=lambda cost: confirm_spend(ctx, f"extending HIT {hit_id}", cost),
    )
    click.echo(f"{hit_id}: " + ("; ".join(done) if done else "nothing changed"))


@click.command()
@directory_argument
@click.argument("hit_ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every HIT of this study.")
@account_options
@reports_errors
def expire(directory, hit_ids, every, sandbox, endpoint_url) -> None:
    """Stop new workers from accepting HITs (workers already working may still submit)."""
    _on_each(open_account(directory, sandbox, endpoint_url), hit_ids, every, hit_actions.expire, "expired")


@click.command()
@directory_argument
@click.argument("hit_ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every HIT of this study.")
@account_options
@reports_errors
def delete(directory, hit_ids, every, sandbox, endpoint_url) -> None:
    """Delete finished HITs: expired, nobody still working, every submission reviewed."""
    _on_each(open_account(directory, sandbox, endpoint_url), hit_ids, every, hit_actions.delete, "deleted")


def _on_each(ctx, hit_ids, every: bool, action: Callable[..., str], done: str) -> None:
    """`action(ctx, hit_id)` on each chosen HIT, its answer shown; a HIT it refuses is named with
    the reason and the others still go ahead, and the command fails at the end if any was
    refused."""
    refused = 0
    for hit_id in _chosen(ctx, hit_ids, every):
        try:
            click.echo(f"{hit_id}: {action(ctx, hit_id)}")
        except hit_module.HitError as error:
            refused += 1
            click.echo(f"{hit_id}: not {done}. {error}", err=True)
    if refused:
        hits = "1 HIT was" if refused == 1 else f"{refused} HITs were"
        raise click.ClickException(f"{hits} not {done} (see above).")


def _chosen(ctx, hit_ids, every) -> list[str]:
    if every:
        return [
            r["hit_id"]
            for r in hit_module.study_hits(ctx, refresh=False)
            if r["status"] != "Disposed"
        ]
    if not hit_ids:
        raise click.ClickException("Name the HITs (see `study mturk list`) or pass --all.")
    return list(hit_ids)
