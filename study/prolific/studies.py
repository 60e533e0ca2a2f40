"""Prolific studies (the HIT's counterpart): drafts made from study.toml, publishing with the
cost reserved under the budget cap, pausing, stopping and adding places.

A study only touches the Prolific studies it created: each is recorded in prolific_studies
before Prolific is asked to create it, under a random token that the study's `internal_name`
carries, so a draft whose answer was lost is found again (`recover`) instead of made twice, and
an id that is not in the table is refused. Each Prolific study gets its own completion code;
the task server sends finished participants to the completion URL with it.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urlparse

from sqlalchemy import delete, select, update

from study.prolific import groups, ledger, money
from study.prolific.client import ProlificError, is_loopback
from study.prolific.context import Context
from study.review import rounds, settings as review_settings
from study.store import reading, writing
from study.store.coordination import take_turn
from study.store.prolific import prolific_studies

# Prolific fills these in per participant (prolific_id_option "url_parameters").
URL_PARAMETERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CLOSED = ("AWAITING REVIEW", "COMPLETED")


class StudyError(RuntimeError):
    pass


@dataclass(frozen=True)
class Draft:
    name: str
    reward: int
    places: int
    estimated_minutes: int
    task_url: str
    round: str | None = None


def study_url(task_url: str, round_name: str | None) -> str:
    """The external_study_url: the task page, the round, and Prolific's URL parameters."""
    joiner = "&" if "?" in task_url else "?"
    extra = urlencode({"round": round_name}) + "&" if round_name else ""
    return f"{task_url}{joiner}{extra}{URL_PARAMETERS}"


def check_draft(ctx: Context, draft: Draft) -> None:
    """Bad input named with its fix, before anything is recorded or sent."""
    parts = urlparse(draft.task_url or "")
    https = parts.scheme == "https" or (parts.scheme == "http" and is_loopback(draft.task_url))
    if not https or not parts.netloc:
        raise StudyError(
            f"task_url {draft.task_url!r} is not an https URL. Fix: pass --task-url (or set "
            "task_url in [prolific]) to the https address of the task server's /task page, e.g. "
            "https://study.example.org/task."
        )
    if not parts.path.rstrip("/").endswith("/task"):
        raise StudyError(
            f"task_url {draft.task_url!r} does not end with /task, the page where participants "
            "enter the study. Fix: e.g. https://study.example.org/task."
        )
    if "PROLIFIC_PID" in draft.task_url:
        raise StudyError(
            "task_url already carries PROLIFIC_PID: the draft adds Prolific's URL parameters "
            "itself. Fix: give the bare /task address."
        )
    if draft.places < 1:
        raise StudyError(f"places must be at least 1, got {draft.places}.")
    least = money.minimum_reward(draft.estimated_minutes, ctx.currency)
    if draft.reward < least:
        raise StudyError(
            f"reward {money.show(draft.reward, ctx.currency)} for {draft.estimated_minutes} "
            f"minutes is below Prolific's minimum hourly rate ({money.show(least, ctx.currency)} "
            "for that time). Fix: raise --reward (or [prolific] reward), or lower "
            "estimated_minutes if the study is shorter."
        )
    if draft.round is not None:
        try:
            rounds.round_named(ctx.study, draft.round)
        except KeyError:
            names = [r.name for r in review_settings.from_study(ctx.study).rounds] or ["none"]
            raise StudyError(
                f"--round {draft.round!r} is not one of this study's rounds ({', '.join(names)}). "
                "Fix: use a name from [[rounds]] in study.toml."
            ) from None


def filters(ctx: Context, round_name: str | None) -> list[dict]:
    """Who may take part: the qualified group for a round that requires a qualification round,
    and never the repeat group of a once-per-participant study."""
    found = []
    chosen = rounds.round_named(ctx.study, round_name)
    if chosen is not None and chosen.requires:
        allowed = groups.find(ctx, "qualified")
        if allowed is None:
            raise StudyError(
                f"Round {chosen.name!r} requires round {chosen.requires!r}, and nobody has "
                "qualified yet. Fix: review the qualification round, then run `study prolific "
                "qualify DIR` to make the qualified group."
            )
        found.append({"filter_id": "participant_group_allowlist", "selected_values": [allowed]})
    blocked = [groups.ensure(ctx, "done")] if ctx.settings.once_per_participant else []
    blocked += [found for found in [groups.find(ctx, "blocked")] if found]
    if blocked:
        found.append({"filter_id": "participant_group_blocklist", "selected_values": blocked})
    return found


def create_draft(ctx: Context, draft: Draft) -> dict:
    """An UNPUBLISHED Prolific study; nothing is paid or reserved until `publish`."""
    check_draft(ctx, draft)
    url = study_url(draft.task_url, draft.round)
    # A re-run after a lost answer (what that error tells the researcher to do) gets the draft
    # the earlier run made, rather than a second one next to it.
    for study_id in recover(ctx):
        earlier = row(ctx, study_id)
        asked = (earlier["name"], earlier["round"], earlier["reward"], earlier["places"], earlier["task_url"])
        if asked == (draft.name, draft.round, draft.reward, draft.places, url):
            return earlier
    study_filters = filters(ctx, draft.round)
    token = secrets.token_hex(8)
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    with writing(ctx.engine) as connection:
        connection.execute(
            prolific_studies.insert().values(
                environment=ctx.environment,
                request_token=token,
                name=draft.name,
                round=draft.round,
                reward=draft.reward,
                places=draft.places,
                task_url=url,
                completion_code=code,
                status="planned",
                created_at=time.time(),
            )
        )
    body = {
        "name": draft.name,
        "internal_name": internal_name(ctx, token),
        "description": ctx.settings.description,
        "external_study_url": url,
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {"code": code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
        ],
        "total_available_places": draft.places,
        "estimated_completion_time": draft.estimated_minutes,
        "reward": draft.reward,
        "device_compatibility": list(ctx.settings.devices),
        "filters": study_filters,
    }
    if ctx.settings.maximum_minutes:
        body["maximum_allowed_time"] = ctx.settings.maximum_minutes
    try:
        created = ctx.client.post("studies/", body)
    except ProlificError as error:
        if error.certain:  # Prolific made nothing: neither does this study keep anything
            _forget(ctx, token)
            raise StudyError(f"Prolific refused the draft: {error.message}") from None
        raise StudyError(
            f"{error.message}\nRun the same command again: it first looks for this draft on "
            "Prolific, so it is not made twice."
        ) from None
    _set(ctx, token, study_id=created["id"], status=created.get("status", "UNPUBLISHED"))
    return row(ctx, created["id"])


def internal_name(ctx: Context, token: str) -> str:
    return f"{ctx.study.name} [{ctx.study.id}:{token}]"


def recover(ctx: Context) -> list[str]:
    """Drafts an earlier run recorded but never heard back about: adopted when Prolific has
    them (found by the token in their internal_name), forgotten otherwise."""
    planned = rows(ctx, status="planned")
    if not planned:
        return []
    on_prolific = {s.get("internal_name"): s for s in ctx.client.pages("studies/")}
    adopted = []
    for item in planned:
        found = on_prolific.get(internal_name(ctx, item["request_token"]))
        if found:
            _set(ctx, item["request_token"], study_id=found["id"], status=found["status"])
            adopted.append(found["id"])
        else:
            _forget(ctx, item["request_token"])
    return adopted


def place_charge(ctx: Context, reward: int) -> money.Cost:
    """What approving one place at `reward` is charged, fees and VAT included, by Prolific's
    calculator asked for ONE place. Prolific charges each approval its reward with the fee on
    that reward, rounded to the cent per place (the emulator's fee model, emulator/fees.py);
    the calculator's total for many places rounds once, so at $2.50 and a third it says $10.00
    for three places where three approvals are charged 3 x $3.33. Reserved per place at this
    charge, each ledger line reads as Prolific's invoice line, and the cap counts what
    approving them all takes."""
    answer = ctx.client.post("study-cost-calculator/", {"reward": reward, "total_available_places": 1})
    return money.Cost(reward, int(round(float(answer["total_cost"]))) - reward, ctx.currency)


def quote(ctx: Context, reward: int, places: int, one: money.Cost | None = None) -> money.Cost:
    """The most `places` places at `reward` may cost, fees and VAT included, as the budget cap
    counts it and a confirmation shows it: approving each place is charged `place_charge`
    (`one`, when already asked), but the notes on Prolific say to budget by the calculator's
    answer for the whole study, which rounds once and may be a cent or so more; the larger of
    the two is counted, so the cap holds however Prolific rounds. The ledger's lines are the
    place charges (study.prolific.ledger.plan_places)."""
    each = (one or place_charge(ctx, reward)).times(places)
    answer = ctx.client.post("study-cost-calculator/", {"reward": reward, "total_available_places": places})
    whole = int(round(float(answer["total_cost"])))
    if whole <= each.total:
        return each
    return money.Cost(reward * places, whole - reward * places, ctx.currency)


def publish(ctx: Context, study_id: str) -> str:
    """Reserve every place under the cap (fees from the calculator), then PUBLISH. A refusal
    releases the reservation: nothing is left behind."""
    record = row(ctx, study_id)
    current = ctx.client.get(f"studies/{study_id}/")
    if current["status"] != "UNPUBLISHED":
        refresh(ctx, study_id, current)
        return f"already {current['status']}"
    places = current["total_available_places"]
    with reading(ctx.engine) as connection:
        missing = _unreserved(connection, ctx, study_id, places)
    if missing > 0:
        one = place_charge(ctx, record["reward"])
        needed = quote(ctx, record["reward"], missing, one)
        with writing(ctx.engine) as connection:
            # Another publish of this study (a second shell) may have reserved them while
            # Prolific's calculator answered: reserved once, not once per shell.
            take_turn(connection, f"places:{ctx.environment}:{study_id}")
            if _unreserved(connection, ctx, study_id, places) == missing:
                ledger.check_budget(connection, ctx.environment, ctx.budget, needed,
                                    f"publishing Prolific study {study_id}")  # fmt: skip
                ledger.plan_places(connection, ctx.environment, study_id=study_id,
                                   reward=record["reward"], fee=one.fees, count=missing,
                                   currency=ctx.currency)  # fmt: skip
    try:
        answer = ctx.client.post(f"studies/{study_id}/transition/", {"action": "PUBLISH"})
    except ProlificError as error:
        answer = ctx.client.get(f"studies/{study_id}/")
        if answer["status"] == "UNPUBLISHED":
            release_places(ctx, study_id, keep=0, note="publishing failed")
            raise StudyError(f"Prolific did not publish study {study_id}: {error.message}") from None
    refresh(ctx, study_id, answer)
    return "published"


def _unreserved(connection, ctx: Context, study_id: str, places: int) -> int:
    """How many of the study's `places` no reservation (kept or taken) covers yet."""
    held = [p for p in ledger.places(connection, ctx.environment, study_id)
            if p["status"] != "cancelled"]  # fmt: skip
    return places - len(held)


# Where each transition leaves a study. Prolific refuses to repeat one (400 "Cannot STOP a study
# that is COMPLETED"), so a re-run of a command killed after Prolific moved the study (or one done
# on the website) must find it there and send nothing, or `stop` never gets to release the
# reservations of the places nobody took.
REACHED = {"PAUSE": ("PAUSED",), "START": ("ACTIVE",), "STOP": CLOSED}


def transition(ctx: Context, study_id: str, action: str) -> str:
    """PAUSE, START or STOP one of this study's Prolific studies; "already <status>" when an
    earlier run or the website did it."""
    row(ctx, study_id)
    current = ctx.client.get(f"studies/{study_id}/")
    if current["status"] in REACHED.get(action, ()):
        refresh(ctx, study_id, current)
        return f"already {current['status']}"
    answer = ctx.client.post(f"studies/{study_id}/transition/", {"action": action})
    refresh(ctx, study_id, answer)
    return answer["status"]


def add_places(ctx: Context, study_id: str, count: int) -> int:
    """Raise the study's places by `count`, reserving them first when it is published. The
    target is recorded before the PATCH, so re-running a call whose answer was lost finishes
    it rather than adding the places twice. Returns the new total."""
    if count < 1:
        raise StudyError(f"--places must be at least 1, got {count}.")
    record = row(ctx, study_id)
    current = ctx.client.get(f"studies/{study_id}/")
    have = current["total_available_places"]
    target = record["places_pending"]
    if target is not None and have >= target:  # the earlier add went through
        _set(ctx, record["request_token"], places_pending=None)
        refresh(ctx, study_id, current)
        return have
    if target is None:
        target = have + count
        with writing(ctx.engine) as connection:
            if current["status"] != "UNPUBLISHED":
                one = place_charge(ctx, record["reward"])
                needed = quote(ctx, record["reward"], count, one)
                ledger.check_budget(connection, ctx.environment, ctx.budget, needed,
                                    f"{count} more places of Prolific study {study_id}")  # fmt: skip
                ledger.plan_places(connection, ctx.environment, study_id=study_id,
                                   reward=record["reward"], fee=one.fees, count=count,
                                   currency=ctx.currency)  # fmt: skip
            _set(ctx, record["request_token"], places_pending=target, connection=connection)
    try:
        answer = ctx.client.patch(f"studies/{study_id}/", {"total_available_places": target})
    except ProlificError as error:
        if error.certain:
            if current["status"] != "UNPUBLISHED":
                release_places(ctx, study_id, note="adding places failed", newest=target - have)
            _set(ctx, record["request_token"], places_pending=None)
            raise StudyError(f"Prolific refused the places: {error.message}") from None
        raise StudyError(f"{error.message}\nRun the same command again to finish it.") from None
    _set(ctx, record["request_token"], places_pending=None)
    refresh(ctx, study_id, answer)
    return answer["total_available_places"]


def release_places(
    ctx: Context, study_id: str, *, note: str, keep: int = 0, newest: int | None = None
) -> int:
    """Cancel open (untaken) place reservations beyond the first `keep`, or the `newest` ones."""
    with writing(ctx.engine) as connection:
        open_now = ledger.open_places(connection, ctx.environment, study_id)
        going = open_now[max(0, len(open_now) - newest):] if newest else open_now[keep:]
        for place in going:
            ledger.settle(connection, place["id"], "cancelled", note)
    return len(going)


# -- storage ----------------------------------------------------------------------------------


def rows(ctx: Context, status: str | None = None) -> list[dict]:
    query = (
        select(prolific_studies)
        .where(prolific_studies.c.environment == ctx.environment)
        .order_by(prolific_studies.c.created_at)
    )
    if status:
        query = query.where(prolific_studies.c.status == status)
    with reading(ctx.engine) as connection:
        return [dict(r) for r in connection.execute(query).mappings()]


def row(ctx: Context, study_id: str) -> dict:
    found = next((r for r in rows(ctx) if r["study_id"] == study_id), None)
    if found is None:
        raise StudyError(
            f"Prolific study {study_id} is not one of this study's in {ctx.environment}. Fix: "
            "check the id with `study prolific list`; this tool never touches studies it did "
            "not create."
        )
    return found


def refresh(ctx: Context, study_id: str, answer: dict) -> None:
    with writing(ctx.engine) as connection:
        connection.execute(
            update(prolific_studies)
            .where(prolific_studies.c.environment == ctx.environment,
                   prolific_studies.c.study_id == study_id)
            .values(status=answer["status"], places=answer["total_available_places"],
                    updated_at=time.time())
        )  # fmt: skip


def _set(ctx: Context, token: str, *, connection=None, **values) -> None:
    statement = (
        update(prolific_studies)
        .where(prolific_studies.c.environment == ctx.environment,
               prolific_studies.c.request_token == token)
        .values(updated_at=time.time(), **values)
    )  # fmt: skip
    if connection is not None:
        connection.execute(statement)
        return
    with writing(ctx.engine) as connection:
        connection.execute(statement)


def _forget(ctx: Context, token: str) -> None:
    with writing(ctx.engine) as connection:
        connection.execute(
            delete(prolific_studies).where(prolific_studies.c.environment == ctx.environment,
                                           prolific_studies.c.request_token == token)
        )  # fmt: skip
