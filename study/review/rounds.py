"""Rounds on the participant's path: which round a session is in, who may enter it, and what it
offers (prompts, instructions).

CoAuthor §4.3.1 and App. D: a qualification round (each writer once, rated by the authors) and
a main round for the writers who passed it. A study declares its rounds in study.toml; the task
URL names the round (`/task?round=qualification`, so each round's HITs carry their own URL) and
the task server records it when the session starts. A session without a recorded round belongs
to the default round; a study without rounds has none of these rules.

The task server asks this module (study.server.participant, study.server.assignment):
  - `entry_refusal`: a qualification round takes each writer once (by worker id or access
    code: MTurk's exclusion qualification can arrive too late, see study.mturk.repeat); a main
    round with `requires` takes only writers who passed that round (study.review.decisions);
    a writer who withdrew (`study withdraw --study`) starts no new session in any round, so
    the main round is closed to them at once, before `study qualify` revokes the platform's
    qualification (it may arrive late, or the researcher may not run it for a while);
  - `resume_refusal`: nor goes on with a session they had not finished (every page of the
    path asks, study.server.stages.at_stage); a finished session's pages stay theirs;
  - `record`: the round of a new session;
  - `prompt_codes`, `instructions`: what the session's round offers.
`study simulate` asks it too (`round_named`, `offered_prompts`, `required_round`), so a pilot
covers the round its writers enter rather than the whole study, and is not started in a round
that would turn its writers away.
"""

from __future__ import annotations

import html

from sqlalchemy import Connection, or_, select

from study import providers
from study.config import Prompt, Study
from study.review import decisions
from study.review import settings as review_settings
from study.review.settings import Round
from study.store.db import sessions
from study.store.coordination import take_turn
from study.store.review_tables import session_rounds
from study.store.withdrawals import recorded as withdrawal

ONCE_REFUSAL = (
    "You have already taken part in the qualification round, and each writer takes part only "
    "once. Please return this HIT; we will let you know whether you qualified."
)
NOT_QUALIFIED = (
    "This round is open to writers who passed the qualification round. Please return this "
    "HIT; thank you for your interest."
)
WITHDREW_REFUSAL = (
    "You have withdrawn from this study, so it takes no further part from you. Please return "
    "this HIT; thank you for the work you did."
)


def round_named(study: Study, name: str | None) -> Round | None:
    """The round a task URL asks for (None: the default); KeyError for an unknown name."""
    rounds = review_settings.from_study(study)
    if not rounds.rounds:
        return None
    if not name:
        return rounds.default_round
    return rounds.round(name)


def round_of(connection: Connection, study: Study, session_id: str) -> Round | None:
    rounds = review_settings.from_study(study)
    if not rounds.rounds:
        return None
    name = connection.execute(
        select(session_rounds.c.round).where(session_rounds.c.session_id == session_id)
    ).scalar()
    if name is None:
        return rounds.default_round
    try:
        return rounds.round(name)
    except KeyError:  # a round since removed from study.toml: treat as the default
        return rounds.default_round


def names_another_round(connection: Connection, study: Study, session: dict, round_name: str | None) -> bool:
    """Whether a returning lab writer's link names a round other than the one their latest
    session, finished, was in: the main round's link after the qualification round then enters
    that round (when `entry_refusal` admits them) rather than showing the finished session again.
    An unknown round counts as another, so that the writer is told it is unknown."""
    if not round_name or session["stage"] != "complete":
        return False
    try:
        wanted = round_named(study, round_name)
    except KeyError:
        return True
    current = round_of(connection, study, session["session_id"])
    return wanted is not None and current is not None and wanted.name != current.name


def sessions_in(study: Study, round_name: str):
    """A SQL condition: sessions of `round_name` (recorded, or unrecorded in the default round)."""
    rounds = review_settings.from_study(study)
    recorded = select(session_rounds.c.session_id).where(session_rounds.c.round == round_name)
    condition = sessions.c.session_id.in_(recorded)
    default = rounds.default_round
    if default is not None and default.name == round_name:
        condition = or_(
            condition, sessions.c.session_id.not_in(select(session_rounds.c.session_id))
        )
    return condition


# What the refusals ask of an MTurk worker; `entry_refusal(returning=...)` words it for the way
# the writer came: Prolific's submission, or nothing for a writer with an access code.
RETURN_HIT = "Please return this HIT; "


def entry_refusal(
    connection: Connection,
    study: Study,
    round_name: str | None,
    *,
    worker_id: str | None = None,
    access_code: str | None = None,
    returning: str | None = "this HIT",
) -> str | None:
    """Why this writer may not start a new session in the round, or None if they may; asking
    them to return `returning` (None: nothing to return, a writer with an access code)."""
    refusal = _why_not(connection, study, round_name, worker_id=worker_id, access_code=access_code)
    return _worded(refusal, returning) if refusal else None


def resume_refusal(connection: Connection, session: dict) -> str | None:
    """Why the writer of this unfinished session may not go on with it (they withdrew after
    starting it), or None: a finished session's pages stay theirs."""
    if session["stage"] == "complete":
        return None
    if withdrawal(connection, session["worker_id"] or session["access_code"] or "") is None:
        return None
    return _worded(WITHDREW_REFUSAL, providers.returning(session))


def _worded(refusal: str, returning: str | None) -> str:
    kept, asked, rest = refusal.partition(RETURN_HIT)
    if not asked or returning == "this HIT":
        return refusal
    if returning:
        return f"{kept}Please return {returning}; {rest}"
    return kept + rest[:1].upper() + rest[1:]


def _why_not(
    connection: Connection,
    study: Study,
    round_name: str | None,
    *,
    worker_id: str | None,
    access_code: str | None,
) -> str | None:
    if withdrawal(connection, worker_id or access_code or "") is not None:
        return WITHDREW_REFUSAL
    try:
        chosen = round_named(study, round_name)
    except KeyError:
        return f"This study has no round named '{round_name}'. Please check the link."
    if chosen is None:
        return None
    writer = decisions.writer_condition(worker_id=worker_id, access_code=access_code)
    if chosen.once_per_worker and writer is not None:
        # A writer's entries take turns until the caller's transaction ends, after it records
        # the new session: on PostgreSQL two HITs opened at once would both find no earlier
        # session, and the writer would take (and be paid for) the round twice.
        take_turn(connection, f"round-entry:{worker_id or access_code}")
        earlier = connection.execute(
            select(sessions.c.session_id).where(writer, sessions_in(study, chosen.name)).limit(1)
        ).first()
        if earlier is not None:
            return ONCE_REFUSAL
    required = required_round(chosen)
    if required:
        if writer is None or not decisions.writer_passed(
            connection, study, required, worker_id=worker_id, access_code=access_code
        ):
            return NOT_QUALIFIED
    return None


def required_round(chosen: Round | None) -> str:
    """The round a writer must have passed to enter `chosen` ("": a newcomer may enter)."""
    return chosen.requires if chosen is not None else ""


def record(connection: Connection, study: Study, session_id: str, round_name: str | None) -> None:
    """Remember the round a new session started in (nothing when the study has no rounds)."""
    chosen = round_named(study, round_name)
    if chosen is not None:
        connection.execute(session_rounds.insert().values(session_id=session_id, round=chosen.name))


def offered_codes(chosen: Round | None) -> set[str] | None:
    """The prompts a round offers; None: every prompt (no rounds, or a round without a list)."""
    return set(chosen.prompts) if chosen is not None and chosen.prompts else None


def offered_prompts(study: Study, chosen: Round | None) -> list[Prompt]:
    """The prompts a round offers, in study order."""
    codes = offered_codes(chosen)
    return [p for p in study.prompts if codes is None or p.code in codes]


def prompt_codes(connection: Connection, study: Study, session_id: str) -> set[str] | None:
    """The prompts the session's round offers; None: every prompt."""
    return offered_codes(round_of(connection, study, session_id))


def instructions(connection: Connection, study: Study, session_id: str) -> str:
    """The instructions page template of the session's round: its notice, then its own page
    (or the study's [texts] instructions)."""
    chosen = round_of(connection, study, session_id)
    if chosen is None:
        return study.instructions_template
    text = study.instructions_template
    if chosen.instructions:
        text = (study.directory / chosen.instructions).read_text(encoding="utf-8")
    if chosen.notice:
        # Plain text from study.toml, shown as written: HTML-escaped, and kept out of Jinja.
        text = (
            f'<p class="notice">{{% raw %}}{html.escape(chosen.notice)}{{% endraw %}}</p>\n{text}'
        )
    return text
