"""Per-request access to the study, the database engine and the suggestion engine."""

from __future__ import annotations

from flask import Flask, abort, current_app
from sqlalchemy import Engine

from study.config import Study
from study.server.session_memory import SessionMemory
from study.store import reading
from study.store import sessions as session_store

# Sessions this process has seen at their writing stage, and their condition: the event API and
# the model-call views (writing_session_or_409) go on without reading such a session first, and
# confirm both under the lock of the transaction that stores what they do (study.store.events
# ingest's `expect`, study.server.model_calls.admit's `confirm_writing`). At a launch that read
# was a tenth of an event batch's CPU, and one of a suggestion's round trips to PostgreSQL.
WRITING_SESSIONS = SessionMemory(4096)


# Each takes the app from the request's context, or `app` where the caller has no context (the
# event lane: study.server.event_lane).


def study(app: Flask | None = None) -> Study:
    return (app or current_app).extensions["study"]


def engine(app: Flask | None = None) -> Engine:
    return (app or current_app).extensions["study.engine"]


def limits(app: Flask | None = None):
    return (app or current_app).extensions["study.limits"]


def suggestion_engine():
    """The suggestion engine `create_app(suggestion_engine=...)` was given (a test's), or None."""
    return current_app.extensions["study.suggestions"]


def session_or_404(session_id: str) -> dict:
    if len(session_id) != 32 or not session_id.isalnum():
        abort(404, f"unknown session '{session_id}'")
    with reading(engine()) as connection:
        session = session_store.get(connection, session_id)
    if session is None:
        abort(404, f"unknown session '{session_id}'")
    return session


def writing_session_or_409(session_id: str) -> dict:
    """`session_brief_or_404` for the APIs that call a model while the participant writes (Tab,
    ghost text, L0's panel): a session past writing gets 409 (JSON on /api/). A session this
    process remembers at writing (WRITING_SESSIONS) is not read: the caller's model call is
    admitted only once its admission confirms it (model_calls.admit, `confirm_writing`)."""
    condition = WRITING_SESSIONS.get(session_id, _UNKNOWN)
    if condition is not _UNKNOWN:
        return {"session_id": session_id, "stage": "writing", "condition": condition}
    session = session_brief_or_404(session_id)
    if session["stage"] != "writing":
        abort(409, f"session is at stage '{session['stage']}', not writing")
    WRITING_SESSIONS.remember(session_id, session["condition"])
    return session


_UNKNOWN = object()


def session_brief_or_404(session_id: str, app: Flask | None = None) -> dict:
    """`session_or_404` for the event API: only session_id, stage and condition, read cheaply
    (it is asked for every batch of every writer)."""
    if len(session_id) != 32 or not session_id.isalnum():
        abort(404, f"unknown session '{session_id}'")
    session = session_store.brief(engine(app), session_id)
    if session is None:
        abort(404, f"unknown session '{session_id}'")
    return session
