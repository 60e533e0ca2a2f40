"""Posting HITs, crash-safely.

Each HIT is first written to mturk_hits as "planned" with a fresh token, "<study id>-<random>",
then created with that token as its UniqueRequestToken and RequesterAnnotation. The study id
(made by `study init`, kept in study.toml) is what tells this study's HITs from any other's on
the same account: two studies made from one template share a name, never an id.

Re-running `post` after a crash finishes the planned HITs instead of posting new ones: within
24 hours MTurk answers a repeated token with HitAlreadyExists and the HIT's id; after that the
token is forgotten, so the HIT is looked up by its annotation first. `sync` adopts any HIT of this study that MTurk has and the
database lacks (`adopt`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from study.config import Study, missing_id_message
from study.mturk import hits as hit_module
from study.mturk import budget, ledger, money
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.promised_pay import first_amount
from study.store import reading, writing
from study.store.mturk import mturk_hits

# After this long MTurk may have forgotten a CreateHIT token (it keeps them 24 hours).
TOKEN_TRUST_SECONDS = 23 * 3600


@dataclass
class Posted:
    hits: list[dict]  # rows of mturk_hits
    cost: money.Cost  # the most these HITs can cost
    resumed: bool  # True: finished HITs an interrupted post had planned, posted nothing new


def post(
    ctx: Context,
    *,
    hits: int,
    assignments: int,
    reward: Decimal,
    task_url: str,
    confirm: Callable[[money.Cost], bool] | None = None,
    page: str = "/task",
) -> Posted | None:
    """Create the HIT type and `hits` HITs of `assignments` assignments. Returns None if
    `confirm` declined. `page`: the page the URL must name (/judge for a judging round)."""
    # Only the interrupted HITs of this kind of post: a judging round's post must not finish the
    # writers' HITs in its place (and report them as judging HITs), nor the other way round.
    judging = page == hit_module.JUDGING_PAGE
    interrupted = [
        r for r in hit_module.rows(ctx, status="planned") if hit_module.is_judging(r) == judging
    ]
    if interrupted:
        return Posted(_finish(ctx, interrupted), _cost(interrupted), resumed=True)
    if hits < 1 or assignments < 1:
        raise hit_module.HitError("Post at least one HIT with at least one assignment.")
    url = hit_module.check_task_url(task_url, allow_http=_dry_run(ctx), page=page)
    cost = money.hit_cost(reward, assignments, hits)
    with reading(ctx.engine) as connection:
        budget.check_budget(connection, ctx.environment, ctx.budget, cost, f"posting {hits} HITs")
    params = hit_module.hit_type_params(ctx, reward, url)
    if confirm is not None and not confirm(cost):
        return None
    hit_type_id = ctx.requester.call("CreateHITType", **params)["HITTypeId"]
    planned = []
    with writing(ctx.engine) as connection:
        budget.check_budget(connection, ctx.environment, ctx.budget, cost, f"posting {hits} HITs")
        for _ in range(hits):
            row = {
                "environment": ctx.environment,
                "request_token": hit_token(ctx.study),
                "hit_type_id": hit_type_id,
                "max_assignments": assignments,
                "reward": money.usd(reward),
                "task_url": url,
                "status": "planned",
                "created_at": time.time(),
            }
            connection.execute(mturk_hits.insert().values(**row))
            ledger.plan_rewards(
                connection,
                ctx.environment,
                hit_token=row["request_token"],
                reward=reward,
                max_assignments=assignments,
                count=assignments,
            )
            planned.append(row)
    return Posted(_finish(ctx, planned), cost, resumed=False)


class _Refused(Exception):
    """MTurk refused a HIT: it does not exist and never will under this token."""


def _finish(ctx: Context, planned: list[dict]) -> list[dict]:
    done = []
    for index, row in enumerate(planned):
        try:
            hit = _create(ctx, row)
        except _Refused as refused:
            # The rest of the post was never sent: drop it with the refused HIT, so that a
            # re-run posts what the researcher fixed rather than the refused plan again.
            left = planned[index:]
            with writing(ctx.engine) as connection:
                for dropped in left:
                    token = dropped["request_token"]
                    hit_module.set_row(connection, ctx.environment, token, status="failed")
                    for slot in _slots_of_token(connection, ctx.environment, token):
                        ledger.settle(
                            connection, slot, "cancelled", f"CreateHIT refused: {refused}"
                        )
            posted = (
                f"{len(done)} of the {len(planned)} HITs were posted, the other {len(left)} not"
                if done
                else f"none of the {len(planned)} HITs was posted"
            )
            raise hit_module.HitError(
                f"MTurk refused the HIT: {refused}\n{posted}, and their reservations are released. "
                "Fix the problem and post them again."
            ) from None
        done.append(_record(ctx, row["request_token"], hit))
    return done


def _create(ctx: Context, row: dict) -> dict:
    token = row["request_token"]
    if time.time() - row["created_at"] > TOKEN_TRUST_SECONDS:
        found = find_by_annotation(ctx, token)
        if found:
            return found
    try:
        return ctx.requester.call(
            "CreateHITWithHITType",
            HITTypeId=row["hit_type_id"],
            MaxAssignments=row["max_assignments"],
            LifetimeInSeconds=ctx.settings.lifetime_seconds,
            Question=hit_module.external_question(row["task_url"], ctx.settings.frame_height),
            RequesterAnnotation=token,
            UniqueRequestToken=token,
        )["HIT"]
    except MTurkError as error:
        if error.turk_code == "AWS.MechanicalTurk.HitAlreadyExists":
            # The HIT exists: never a refusal. Its id is in the message, else find it by the
            # annotation it carries.
            if error.entity_id():
                return ctx.requester.call("GetHIT", HITId=error.entity_id())["HIT"]
            found = find_by_annotation(ctx, token)
            if found:
                return found
            raise hit_module.HitError(
                f"{error}\nMTurk says this HIT exists but names no id, and no HIT lists its "
                "annotation yet. Run the same post again later: it finishes this HIT without "
                "posting it twice."
            ) from None
        if error.certain:
            raise _Refused(str(error)) from None
        raise hit_module.HitError(
            f"{error}\nThe HIT may or may not exist now. Run the same post again: it finishes this "
            "HIT without posting it twice."
        ) from None


def find_by_annotation(ctx: Context, token: str) -> dict | None:
    return next(
        (
            h
            for h in ctx.requester.pages("ListHITs", "HITs")
            if h.get("RequesterAnnotation") == token
        ),
        None,
    )


def _record(ctx: Context, token: str, hit: dict) -> dict:
    with writing(ctx.engine) as connection:
        hit_module.set_row(
            connection,
            ctx.environment,
            token,
            hit_id=hit["HITId"],
            hit_type_id=hit["HITTypeId"],
            status=hit["HITStatus"],
            expiration=hit_module.epoch(hit["Expiration"]),
            updated_at=time.time(),
        )
        ledger.attach_hit(connection, ctx.environment, token, hit["HITId"])
    return {**_row(ctx, token), "HIT": hit}


def adopt(ctx: Context, hit: dict) -> None:
    """Track a HIT of this study that MTurk has and the database lacks: a post that crashed
    after MTurk created the HIT (its planned row gets the id) or one the database never saw."""
    token = hit["RequesterAnnotation"]
    if any(r["request_token"] == token for r in hit_module.rows(ctx)):
        _record(ctx, token, hit)
        return
    with writing(ctx.engine) as connection:
        connection.execute(
            mturk_hits.insert().values(
                environment=ctx.environment,
                request_token=token,
                hit_id=hit["HITId"],
                hit_type_id=hit["HITTypeId"],
                max_assignments=hit["MaxAssignments"],
                reward=hit["Reward"],
                # The HIT's own URL: it tells a judging round's HITs from writers' (is_judging).
                task_url=hit_module.question_url(hit.get("Question")),
                status=hit["HITStatus"],
                expiration=hit_module.epoch(hit["Expiration"]),
                created_at=time.time(),
            )
        )


def hit_token(study: Study) -> str:
    """A HIT's UniqueRequestToken and RequesterAnnotation (57 characters; MTurk allows 64)."""
    if not study.id:
        raise hit_module.HitError(missing_id_message(study))
    return f"{study.id}-{uuid.uuid4().hex[:24]}"


def is_ours(ctx: Context, hit: dict) -> bool:
    """Whether MTurk's HIT was posted by this study: its annotation names this study's id."""
    study_id, _, rest = (hit.get("RequesterAnnotation") or "").partition("-")
    return bool(ctx.study.id) and study_id == ctx.study.id and bool(rest)


def pay_mismatch(study: Study, reward: Decimal) -> str | None:
    """What is wrong when the consent page promises other pay than the HIT's reward. Pay in
    words agrees when the first amount it names is the reward: "$2.50 plus a $1.00 bonus for
    the best stories" promises $2.50 for the HIT, and a HIT paying $1.00 names the bonus."""
    if not study.pay:
        return None
    try:
        promised = money.parse_usd(study.pay)
    except money.MoneyError:
        named = first_amount(study.pay, "$")
        promised = named[1] if named else None
    if promised == reward:
        return None
    return (
        f"The consent page promises pay = {study.pay!r} ([study] in study.toml), but the HIT "
        f"would pay {money.show(reward)} per assignment."
    )


def _slots_of_token(connection, environment: str, token: str) -> list[int]:
    return [
        e["id"]
        for e in ledger.entries(connection, environment, kind="reward")
        if e["request_token"] == token
    ]


def _cost(rows: list[dict]) -> money.Cost:
    total = money.ZERO
    for row in rows:
        total += money.hit_cost(Decimal(row["reward"]), row["max_assignments"])
    return total


def _dry_run(ctx: Context) -> bool:
    return ctx.requester.custom_endpoint  # e.g. a local emulator


def _row(ctx: Context, token: str) -> dict:
    return next(r for r in hit_module.rows(ctx) if r["request_token"] == token)
