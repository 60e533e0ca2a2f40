"""The editor's suggestion API.

POST /api/sessions/<id>/suggestions {"doc": text, "on_screen": [texts shown now]}
  -> 200 {"suggestions": [{"index", "original", "trimmed", "probability"}, ...]}
  -> 429 / 502 / 504 {"error": "..."} which the editor logs as suggestion-fail.
The model, endpoint and key come from the session's condition on the server; the response
carries only what the writer will see. Every request is logged with its raw outputs.
"""

from __future__ import annotations

import json
import time

from flask import Blueprint, jsonify, request
from sqlalchemy import func, select

from study.server.context import engine, session_or_404, study, suggestion_engine
from study.store import reading, writing
from study.store.db import suggestion_requests

blueprint = Blueprint("suggestions_api", __name__, url_prefix="/api/sessions")

MAX_DOC_CHARS = 50_000


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

    limit = study().suggestions.max_requests_per_minute
    with reading(engine()) as connection:
        recent = connection.execute(
            select(func.count())
            .select_from(suggestion_requests)
            .where(suggestion_requests.c.session_id == session_id)
            .where(suggestion_requests.c.created_at > time.time() - 60)
        ).scalar_one()
    if recent >= limit:
        return jsonify(error=f"too many requests: at most {limit} per minute; wait a moment"), 429

    condition = study().condition(session["condition"])
    result = suggestion_engine().suggest(condition, doc, on_screen)
    with writing(engine()) as connection:
        connection.execute(
            suggestion_requests.insert().values(
                session_id=session_id,
                created_at=time.time(),
                condition=condition.name,
                model=condition.model,
                parameters=json.dumps(result.parameters),
                raw=json.dumps(result.raw),
                suggestions=json.dumps(result.suggestions),
                latency_ms=result.latency_ms,
                error=result.error,
            )
        )
    if result.error:
        return jsonify(error=result.error), 504 if result.timed_out else 502
    return jsonify(suggestions=result.suggestions)
