"""The editor's suggestion API.

POST /api/sessions/<id>/suggestions {"doc": text, "on_screen": [texts shown now]}
  -> 200 {"suggestions": [{"index", "original", "trimmed", "probability"}, ...]}
  -> 429 / 502 / 503 / 504 {"error": "..."} which the editor shows and logs as suggestion-fail.
The model, endpoint and key come from the session's condition on the server; the response
carries only what the writer will see. Every request is logged with its raw outputs.

Cost and fairness guards, in order (README, "Suggestions"):
- at most `concurrent_requests` suggestion requests are served at once (per server process);
  the others get 503 at once, so slow model calls cannot take every thread from event ingest;
- in one transaction, the per-session limit (`max_requests_per_minute`) and the study-wide one
  (`model_calls_per_minute`) are counted and the request is recorded *before* the model is
  called: concurrent requests see each other, so the limits hold under a burst;
- a failure reaches the writer as one calm sentence; the reason (which names the endpoint)
  goes to the server log and the suggestion_requests row, which `study status` summarises.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from flask import Blueprint, current_app, jsonify, request
from sqlalchemy import func, select, update

from study.server.context import engine, limits, session_or_404, study, suggestion_engine
from study.store import writing
from study.store.db import sessions, suggestion_requests

blueprint = Blueprint("suggestions_api", __name__, url_prefix="/api/sessions")

MAX_DOC_CHARS = 50_000
# What the writer reads when the model fails: nothing about endpoints or status codes.
UNAVAILABLE = "suggestions are not available right now"
BUSY = "suggestions are busy right now; try again in a moment"
# Written before the model is called, replaced by the outcome; left only if the server stopped.
NO_OUTCOME = "no outcome recorded: the server stopped while the model was being asked"

logger = logging.getLogger(__name__)


def _slots() -> threading.BoundedSemaphore:
    return current_app.extensions["study.suggestion_slots"]


@blueprint.post("/<session_id>/suggestions")
def suggest(session_id):
    session = session_or_404(session_id)
    if session["stage"] != "writing":
        return jsonify(error=f"session is at stage '{session['stage']}', not writing"), 409
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("doc"), str):
        return jsonify(error="expected a JSON object with a string 'doc'"), 400
    on_screen = body.get("on_screen", [])
    if not isinstance(on_screen, list) or not all(isinstance(s, str) for s in on_screen):
        return jsonify(error="'on_screen' must be a list of strings"), 400
    doc = body["doc"][-MAX_DOC_CHARS:]

    if not _slots().acquire(blocking=False):
        return jsonify(error=BUSY), 503
    try:
        return _suggest(session_id, session, doc, on_screen)
    finally:
        _slots().release()


def _suggest(session_id: str, session: dict, doc: str, on_screen: list[str]):
    per_session = study().suggestions.max_requests_per_minute
    study_wide = limits().model_calls_per_minute
    condition = study().condition(session["condition"])
    with writing(engine()) as connection:
        if connection.dialect.name == "postgresql":
            # One counter for the study: requests take turns at counting and recording.
            connection.execute(
                select(sessions.c.session_id).where(sessions.c.session_id == session_id).with_for_update()
            )
        since = time.time() - 60
        recent = connection.execute(
            select(func.count())
            .select_from(suggestion_requests)
            .where(suggestion_requests.c.session_id == session_id)
            .where(suggestion_requests.c.created_at > since)
        ).scalar_one()
        if recent >= per_session:
            return jsonify(error=f"too many requests: at most {per_session} per minute; wait a moment"), 429
        everyone = connection.execute(
            select(func.count())
            .select_from(suggestion_requests)
            .where(suggestion_requests.c.created_at > since)
        ).scalar_one()
        if everyone >= study_wide:
            logger.warning("suggestions: the study-wide limit of %d model calls per minute is reached", study_wide)
            return jsonify(error=BUSY), 429
        request_id = connection.execute(
            suggestion_requests.insert().values(
                session_id=session_id,
                created_at=time.time(),
                condition=condition.name,
                model=condition.model,
                parameters="{}",
                raw="[]",
                suggestions="[]",
                error=NO_OUTCOME,
            )
        ).inserted_primary_key[0]

    result = suggestion_engine().suggest(condition, doc, on_screen)
    with writing(engine()) as connection:
        connection.execute(
            update(suggestion_requests)
            .where(suggestion_requests.c.id == request_id)
            .values(
                # The model that answered, as the endpoint's reply names it; the one asked for
                # when nothing answered (parameters keep the configured name either way).
                model=result.answered_model or condition.model,
                parameters=json.dumps(result.parameters),
                raw=json.dumps(result.raw),
                suggestions=json.dumps(result.suggestions),
                latency_ms=result.latency_ms,
                error=result.error,
            )
        )
    if result.error:
        logger.warning("suggestions for session %s failed: %s", session_id, result.error)
        return jsonify(error=UNAVAILABLE), 504 if result.timed_out else 502
    return jsonify(suggestions=result.suggestions)
