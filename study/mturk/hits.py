"""HITs: what one is made of (the ExternalQuestion, the requirements, the HIT type), and
watching this study's HITs and their reserved slots (table mturk_hits). Posting them,
crash-safely, is study.mturk.posting; extending, expiring and deleting them is
study.mturk.hit_actions.
"""

from __future__ import annotations

import datetime as dt
import time
import xml.etree.ElementTree as ET
from decimal import Decimal
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

from sqlalchemy import select, update

from study.mturk import ledger, money, qualifications
from study.mturk.client import MTurkError, is_loopback
from study.mturk.context import Context
from study.review import rounds
from study.review import settings as review_settings
from study.store import reading, writing
from study.store.mturk import mturk_hits

EXTERNAL_QUESTION_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
MAX_REQUIREMENTS = 10
CLOSED = ("Reviewable", "Reviewing", "Disposed")


class HitError(RuntimeError):
    pass


# -- what a HIT is made of --------------------------------------------------------------------


def external_question(task_url: str, frame_height: int = 0) -> str:
    """The ExternalQuestion (schema 2006-07-14); `&` in the URL must be escaped as `&amp;`.
    FrameHeight 0 lets the task fill the worker's window."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(task_url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def question_url(question: str | None) -> str:
    """The ExternalURL of a HIT's Question ("" for another kind of question)."""
    try:
        root = ET.fromstring(question or "")
    except ET.ParseError:
        return ""
    return (root.findtext(f"{{{EXTERNAL_QUESTION_NS}}}ExternalURL") or "").strip()


# The judging round's entry page (study.judging.web): HITs whose URL ends with it are judges'
# work, which writers' review leaves alone (study.mturk.judging reviews them).
JUDGING_PAGE = "/judge"


def check_task_url(url: str, *, allow_http: bool = False, page: str = "/task") -> str:
    """The task server's /task page (or `page`, /judge for a judging round): MTurk only frames
    https pages (http only for dry runs). Only a dry run (`allow_http`: an endpoint other than
    MTurk's) may name this machine: on MTurk, 127.0.0.1 or localhost is each worker's own
    computer, so whoever accepted would find no study and go unpaid."""
    parts = urlparse(url or "")
    if page == "/task":
        fix = ("pass --task-url (or set task_url in [mturk]) to the https address of the task "
               "server's /task page, e.g. https://study.example.org/task.")  # fmt: skip
    else:  # a judging round's page, found beside [mturk] task_url (study.mturk.judging)
        fix = (f"set task_url in [mturk] to the https address of the task server's /task page "
               f"(the {page} page beside it is used), or pass --task-url "
               f"https://study.example.org{page}.")  # fmt: skip
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes or not parts.netloc:
        raise HitError(f"The task URL {url!r} is not an https URL. Fix: {fix}")
    if not allow_http and is_loopback(url):
        raise HitError(
            f"The task URL {url!r} is on this machine (a dry run's address): workers on MTurk "
            f"would open their own computer and find no study. Fix: {fix}"
        )
    if not parts.path.rstrip("/").endswith(page):
        raise HitError(
            f"The task URL {url!r} does not end with {page}, the page where workers enter the "
            f"study. Fix: e.g. https://study.example.org{page}."
        )
    return url


def is_judging(row: dict) -> bool:
    """Whether a HIT (a row of mturk_hits) is a judging round's rather than writers'."""
    return urlparse(row.get("task_url") or "").path.rstrip("/").endswith(JUDGING_PAGE)


def requirements(ctx: Context, task_url: str = "") -> list[dict]:
    """The paper's presets, the study's own qualifications, and the exclusion qualification;
    for HITs whose `task_url` enters a qualification round, without the qualification that
    round grants (`entry_qualification`)."""
    settings = ctx.settings
    found = qualifications.paper_requirements() if settings.paper_requirements else []
    granted_here = entry_qualification(ctx, task_url)
    for requirement in settings.qualifications:
        if requirement.qualification == granted_here:
            continue
        item = {
            "QualificationTypeId": qualifications.resolve(
                ctx.engine, ctx.environment, requirement.qualification
            ),
            "Comparator": requirement.comparator,
        }
        if requirement.values:
            item["IntegerValues"] = list(requirement.values)
        found.append(item)
    if settings.once_per_worker:
        found.append(
            qualifications.exclusion_requirement(
                qualifications.ensure_exclusion(ctx.requester, ctx.engine, ctx.study)
            )
        )
    if len(found) > MAX_REQUIREMENTS:
        raise HitError(
            f"A HIT takes at most {MAX_REQUIREMENTS} qualification requirements; this study has {len(found)}."
        )
    return found


def entry_qualification(ctx: Context, task_url: str) -> str | None:
    """[review] qualification when `task_url` is a writers' page entering a qualification round,
    else None. `study qualify` grants it to the writers who passed that round "so the main
    round's HITs can require it" (README); the qualification round's own HITs are for writers who
    do not hold it yet, and requiring it there would let only those who already passed accept."""
    parts = urlparse(task_url or "")
    if not task_url or parts.path.rstrip("/").endswith(JUDGING_PAGE):
        return None
    try:
        chosen = rounds.round_named(ctx.study, parse_qs(parts.query).get("round", [""])[0])
    except KeyError:  # an unknown round: the task server refuses its writers anyway
        return None
    if chosen is None or chosen.kind != review_settings.QUALIFICATION:
        return None
    return review_settings.from_study(ctx.study).qualification


def hit_type_params(ctx: Context, reward: Decimal, task_url: str = "") -> dict:
    settings = ctx.settings
    return {
        "Title": settings.title,
        "Description": settings.description,
        "Keywords": settings.keywords,
        "Reward": money.usd(reward),
        "AssignmentDurationInSeconds": settings.assignment_seconds,
        "AutoApprovalDelayInSeconds": settings.auto_approve_seconds,
        "QualificationRequirements": requirements(ctx, task_url),
    }


# -- watching and changing HITs ---------------------------------------------------------------


def study_hits(ctx: Context, *, refresh: bool = True) -> list[dict]:
    """This study's HITs in this environment; with `refresh`, each with MTurk's current view."""
    posted = [r for r in rows(ctx) if r["hit_id"]]
    if not refresh:
        return posted
    return [
        {**r, "HIT": current(ctx, r["hit_id"])} if r["status"] != "Disposed" else r for r in posted
    ]


def current(ctx: Context, hit_id: str) -> dict | None:
    """MTurk's view of a HIT, also stored locally; None once it is gone (deleted)."""
    try:
        hit = ctx.requester.call("GetHIT", HITId=hit_id)["HIT"]
    except MTurkError as error:
        if error.certain and "does not exist" in error.message:
            update_hit(ctx, hit_id, status="Disposed")
            return None
        raise
    update_hit(
        ctx,
        hit_id,
        status=hit["HITStatus"],
        expiration=epoch(hit["Expiration"]),
        max_assignments=hit["MaxAssignments"],
    )
    return hit


def taken(ctx: Context, hit_id: str) -> list[dict]:
    """The HIT's assignments that were submitted (whatever became of them since)."""
    return list(ctx.requester.pages("ListAssignmentsForHIT", "Assignments", HITId=hit_id))


def awaiting_review(ctx: Context, hit: dict) -> list[dict]:
    """The HIT's assignments submitted and neither approved nor rejected yet. None of GetHIT's
    counts holds them (Pending is accepted and not submitted, Completed is approved or
    rejected), so they are asked for by status; each carries its AutoApprovalTime. A HIT whose
    counts add up to its MaxAssignments has none, and MTurk is not asked: a study of many HITs
    reviewed already lists them without a call each. (The gap is not the number submitted: an
    expired HIT counts its slots nobody took as neither available nor anything else.)"""
    counted = sum(hit[f"NumberOfAssignments{kind}"] for kind in ("Available", "Pending", "Completed"))
    if counted >= hit["MaxAssignments"]:
        return []
    return list(
        ctx.requester.pages(
            "ListAssignmentsForHIT", "Assignments", HITId=hit["HITId"], AssignmentStatuses=["Submitted"]
        )
    )


def open_slots(hit: dict | None) -> int:
    """How many more assignments of the HIT can still be submitted (none once closed)."""
    if hit is None or hit["HITStatus"] in CLOSED:
        return 0
    return hit["NumberOfAssignmentsAvailable"] + hit["NumberOfAssignmentsPending"]


def fit_reservations(
    ctx: Context, hit_id: str, hit: dict | None, *, unrecorded: int | None = None
) -> None:
    """Release the reserved slots the HIT can no longer use (closed, expired or deleted). Slots
    stay for assignments that can still arrive and for `unrecorded` submissions, those MTurk
    has but the ledger has not bound yet (counted here unless the caller knows)."""
    if hit is not None and unrecorded is None:
        with reading(ctx.engine) as connection:
            unrecorded = sum(
                ledger.reward_entry(connection, ctx.environment, a["AssignmentId"]) is None
                for a in taken(ctx, hit_id)
            )
    keep = open_slots(hit) + (unrecorded or 0)
    note = "the HIT was deleted" if hit is None else "the HIT closed without this assignment"
    with reading(ctx.engine) as connection:
        if len(unbound_slots(connection, ctx, hit_id)) <= keep:
            return  # the usual case: nothing to release, no write lock taken
    with writing(ctx.engine) as connection:
        for slot in unbound_slots(connection, ctx, hit_id)[keep:]:
            ledger.settle(connection, slot["id"], "cancelled", note)


def unbound_slots(connection, ctx: Context, hit_id: str) -> list[dict]:
    """The HIT's reserved slots no submission is bound to yet."""
    return [
        s
        for s in ledger.slots(connection, ctx.environment, hit_id)
        if s["assignment_id"] is None and s["status"] == "intended"
    ]


# -- storage ----------------------------------------------------------------------------------


def rows(ctx: Context, status: str | None = None) -> list[dict]:
    query = (
        select(mturk_hits)
        .where(mturk_hits.c.environment == ctx.environment)
        .order_by(mturk_hits.c.created_at)
    )
    if status:
        query = query.where(mturk_hits.c.status == status)
    with reading(ctx.engine) as connection:
        return [dict(r) for r in connection.execute(query).mappings()]


def row_by_hit(ctx: Context, hit_id: str) -> dict:
    found = next((r for r in rows(ctx) if r["hit_id"] == hit_id), None)
    if found is None:
        raise HitError(
            f"HIT {hit_id} is not one of this study's HITs in {ctx.environment}. Fix: check the "
            "id with `study mturk list` (`study mturk sync` first finds a HIT a crashed post "
            "left unrecorded)."
        )
    return found


def set_row(connection, environment: str, token: str, **values) -> None:
    connection.execute(
        update(mturk_hits)
        .where(mturk_hits.c.environment == environment, mturk_hits.c.request_token == token)
        .values(**values)
    )


def update_hit(ctx: Context, hit_id: str, **values) -> None:
    with writing(ctx.engine) as connection:
        connection.execute(
            update(mturk_hits)
            .where(mturk_hits.c.environment == ctx.environment, mturk_hits.c.hit_id == hit_id)
            .values(updated_at=time.time(), **values)
        )


def epoch(value) -> float:
    return value.timestamp() if isinstance(value, dt.datetime) else float(value)


def utc_text(value) -> str:
    """An MTurk time (a datetime from boto3, or epoch seconds) as a researcher reads it."""
    return f"{dt.datetime.fromtimestamp(epoch(value), dt.timezone.utc):%Y-%m-%d %H:%M} UTC"
