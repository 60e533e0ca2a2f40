"""The editor's suggestion API.

POST /api/sessions/<id>/suggestions {"doc": text, "on_screen": [texts shown now]}
  -> 200 {"suggestions": [{"index", "original", "trimmed", "probability"}, ...]}
  -> 429 / 502 / 503 / 504 {"error": "..."} which the editor shows and logs as suggestion-fail.
The model, endpoint and key come from the session's condition on the server; the response
carries only what the writer will see. Every request is logged with its raw outputs.

Cost and fairness guards (study.server.model_calls, README "Suggestions"): a bounded number of
requests served at once (503 past it), the per-session and study-wide limits counted and the
request recorded before the model is called (429 past them), and a calm sentence for the
writer when the model fails while the reason goes to the log and the suggestion_requests row.
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from study import control_arm, precedence
from study.server import contract, model_calls
from study.paradigms.tab.engine import SuggestionEngine
from study.server.context import limits, study, suggestion_engine, writing_session_or_409

blueprint = Blueprint("suggestions_api", __name__, url_prefix="/api/sessions")


@blueprint.post("/<session_id>/suggestions")
@contract.declare(
    "Ask for Tab suggestions (CoAuthor)", body="api/suggestions-request.schema.json",
    responses={200: "api/responses.schema.json#/$defs/suggestions", 409: contract.ERROR, 429: contract.ERROR,
               502: contract.ERROR, 503: contract.ERROR, 504: contract.ERROR},
)  # fmt: skip
@precedence.watched
def suggest(session_id):
    session = writing_session_or_409(session_id)
    body = contract.body()
    on_screen = body.get("on_screen", [])
    doc = body["doc"][-limits().prompt_chars:]  # [suggestions] prompt_chars

    condition = study().condition(session["condition"])
    if control_arm.is_control(condition):
        # The control arm has no assistant: refused before any model call or request count
        # (and without the condition's name, which the participant's browser may read).
        return jsonify(error="this session has no assistant: it gets no suggestions"), 409
    if not study().proactive.tab_list(condition.paradigm):
        # A proactive condition's suggestions are ghost text from /proactive, L0's assistant
        # panel answers at /assistant: a Tab list here would be a second, unlogged paradigm in
        # the same session.
        # Not the condition's name: the participant's browser may read this answer.
        return jsonify(error="this session's suggestions come from ghost text, not Tab"), 409
    try:
        with model_calls.slot():
            request_id = model_calls.admit(session_id, condition, confirm_writing=True)
            # The engine holds only the settings: one per request unless a test gave its own.
            engine = suggestion_engine() or SuggestionEngine(study().suggestions)
            result = engine.suggest(condition, doc, on_screen)
    except model_calls.Refused as refusal:
        return refusal.response()
    model_calls.settle(
        request_id, condition, answered_model=result.answered_model, parameters=result.parameters,
        raw=result.raw, suggestions=result.suggestions, latency_ms=result.latency_ms,
        error=result.error,
    )  # fmt: skip
    if result.error:
        return model_calls.unavailable("suggestions", session_id, result.error, result.timed_out)
    return jsonify(suggestions=result.suggestions)
