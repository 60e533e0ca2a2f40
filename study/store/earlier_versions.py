"""Data an earlier version of the toolkit kept elsewhere, moved where this one reads it, once,
as study.store.schema.create_tables adds the table that now holds it.

Survey answers: before the survey engine (f2e02cb) a session's answers to the `[[survey]]`
questions were kept only in `sessions.survey`; every reader now takes them from
`survey_responses` (survey.csv and surveys.json of `study export`, `study status`'s counts), so
a study database made before it exported no survey answers at all and counted none submitted.
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, column, insert, select, table

# The columns read and written, by name: study.store.schema calls this module as it creates
# the tables, and the tables' own modules import study.store, so this module imports none of them.
sessions = table("sessions", *(column(name) for name in (
    "session_id", "survey", "created_at", "writing_finished_at", "completed_at")))  # fmt: skip
survey_responses = table("survey_responses", *(column(name) for name in (
    "session_id", "survey", "occasion", "placement", "answers", "page", "started_at", "submitted_at")))  # fmt: skip

# What the `[[survey]]` list is now asked as (study.survey.questions.LEGACY_NAME): an
# after-session survey of one page.
LEGACY_SURVEY, LEGACY_PLACEMENT = "post_session", "after_session"


def move_survey_answers(bind: Connection) -> int:
    """Give each session that has answers in `sessions.survey` its `post_session` response;
    run in the transaction that creates `survey_responses`. Returns how many were moved."""
    rows = bind.execute(
        select(sessions.c.session_id, sessions.c.survey, sessions.c.created_at,
               sessions.c.writing_finished_at, sessions.c.completed_at)
        .where(sessions.c.survey.is_not(None))
    ).all()  # fmt: skip
    responses = []
    for session_id, answers, created_at, finished_writing_at, completed_at in rows:
        try:
            parsed = json.loads(answers)
        except ValueError:
            continue  # not the earlier version's answers: nothing to move
        if not isinstance(parsed, dict) or not parsed:
            continue
        # The earlier version stamped only the completion, which the survey's one page made.
        started = finished_writing_at or completed_at or created_at
        responses.append({
            "session_id": session_id, "survey": LEGACY_SURVEY, "occasion": 0, "placement": LEGACY_PLACEMENT,
            "answers": json.dumps(parsed, ensure_ascii=False), "page": 2, "started_at": started,
            "submitted_at": completed_at or started,
        })  # fmt: skip
    if responses:
        bind.execute(insert(survey_responses), responses)
    return len(responses)
