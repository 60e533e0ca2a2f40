"""Survey answers: one row per (session, survey, occasion), saved page by page.

A page's answers are merged into the row in the same transaction that moves it to the next page,
so a reload shows the next page and never loses an answered one; the last page stamps
`submitted_at`. In-session surveys (CollabLLM's periodic rating) have one row per occasion,
the number of exchanges it followed.
"""

from __future__ import annotations

import json
import time

from sqlalchemy import Column, Connection, Float, Integer, String, Table, Text, select

from study.store.db import metadata, sessions
from study.store.coordination import take_turn


survey_responses = Table(
    "survey_responses",
    metadata,
    # One row per survey asked in a session, and per occasion of an in-session survey (the
    # exchange count it followed; 0 for surveys placed on the participant's path).
    Column("session_id", String(32), primary_key=True),
    Column("survey", String(64), primary_key=True),
    Column("occasion", Integer, primary_key=True, autoincrement=False),
    Column("placement", String(16), nullable=False),
    Column("answers", Text, nullable=False),  # JSON: item id -> answer, only shown questions
    Column("page", Integer, nullable=False),  # the next page to answer (pages done + 1)
    Column("started_at", Float, nullable=False),
    Column("submitted_at", Float),  # NULL until the last page is answered
)


def get(connection: Connection, session_id: str, survey: str, occasion: int = 0) -> dict | None:
    row = connection.execute(
        select(survey_responses).where(
            survey_responses.c.session_id == session_id,
            survey_responses.c.survey == survey,
            survey_responses.c.occasion == occasion,
        )
    ).mappings().first()
    return _decoded(row) if row else None


def save_page(
    connection: Connection, session_id: str, survey: str, occasion: int, placement: str,
    answers: dict, next_page: int, last: bool,
) -> dict:  # fmt: skip
    """Merge one page's answers; the row is created on the first page."""
    # A page sent twice at once (a double-click, a second tab) takes turns: on PostgreSQL both
    # would find no row and the second insert would fail on the row's key, a 500 for a page the
    # first had saved. (SQLite's write lock already makes them take turns.)
    take_turn(connection, f"survey-response:{session_id}:{survey}:{occasion}")
    now = time.time()
    row = get(connection, session_id, survey, occasion)
    if row is None:
        connection.execute(survey_responses.insert().values(
            session_id=session_id, survey=survey, occasion=occasion, placement=placement,
            answers=json.dumps(answers, ensure_ascii=False), page=next_page, started_at=now,
            submitted_at=now if last else None,
        ))  # fmt: skip
    elif row["submitted_at"] is None:
        merged = {**row["answers"], **answers}
        connection.execute(
            survey_responses.update()
            .where(
                survey_responses.c.session_id == session_id,
                survey_responses.c.survey == survey,
                survey_responses.c.occasion == occasion,
            )
            .values(answers=json.dumps(merged, ensure_ascii=False), page=next_page,
                    submitted_at=now if last else None)
        )  # fmt: skip
    return get(connection, session_id, survey, occasion)


def for_session(connection: Connection, session_id: str) -> list[dict]:
    rows = connection.execute(
        select(survey_responses)
        .where(survey_responses.c.session_id == session_id)
        .order_by(survey_responses.c.started_at, survey_responses.c.survey, survey_responses.c.occasion)
    ).mappings()
    return [_decoded(row) for row in rows]


def submitted_by_participant(connection: Connection, session: dict, survey: str) -> bool:
    """Whether this session's participant (same worker or access code) has submitted `survey`
    in any session: end-of-study surveys are asked once per participant."""
    if session["worker_id"]:
        same = sessions.c.worker_id == session["worker_id"]
    elif session["access_code"]:
        same = sessions.c.access_code == session["access_code"]
    else:
        same = sessions.c.session_id == session["session_id"]
    row = connection.execute(
        select(survey_responses.c.session_id)
        .join(sessions, sessions.c.session_id == survey_responses.c.session_id)
        .where(same, survey_responses.c.survey == survey, survey_responses.c.submitted_at.is_not(None))
        .limit(1)
    ).first()
    return row is not None


def all_responses(connection: Connection) -> list[dict]:
    rows = connection.execute(
        select(survey_responses).order_by(
            survey_responses.c.session_id, survey_responses.c.started_at, survey_responses.c.occasion
        )
    ).mappings()
    return [_decoded(row) for row in rows]


def _decoded(row) -> dict:
    out = dict(row)
    out["answers"] = json.loads(out["answers"] or "{}")
    return out
