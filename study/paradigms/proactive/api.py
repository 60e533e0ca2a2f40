"""The editor's API for proactive suggestions (MindCopilot L1-L3; README, Proactive co-writing).

POST /api/sessions/<id>/proactive
  {"doc": text, "history": [{kind, index, length | text}, ...],
   "outcomes": ["accepted" | "accepted_modified" | "rejected" | ..., ...],
   "kept_words": [int, ...], "idle_ms": int}
  -> 200 {"suggestionId", "suggestion": {index, original, trimmed, probability}, "rationale",
          "stage", "idleMs", "maxTokens"} (no paradigm or strategy name: the event API fills
          them in, study.paradigms.proactive.arrival)
  -> 400 (bad body) / 409 (not an L1-L3 session or not writing) / 429 / 502 / 503 / 504
     {"error"}; 503 with Retry-After and {"error", "retry_after"} while the model endpoint is
     getting ready (it answered 503: loading its model), which the editor asks again after,
     saying so; a failed model call answers the calm line of study.server.model_calls, whose
     guards (limits counted and the request recorded before the model is called, a bounded
     number served at once) apply as to Tab suggestions.

POST /api/sessions/<id>/assistant  {"request": text, "doc": text}
  -> 200 {"chatId", "response"}: L0's assistant panel (study.paradigms.proactive.assistant), for
     a condition of paradigm "L0" when [proactive] l0 = "assistant"; stored in
     suggestion_requests like a suggestion (its row id is the chatId the editor logs), under the
     same guards; 409 for any other session.

The browser sends the history only for L2 and L3; it decides when to ask (the idle timer).
Each request is stored in suggestion_requests like a Tab query, its `parameters` holding the
per-suggestion record of spec A2.6 (paradigm, stage, strategy, idle threshold, context sent,
prompt hash, rationale); its row id is the suggestion id the editor logs.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from study import precedence
from study.server import contract, model_calls
from study.server.context import session_or_404, study, writing_session_or_409
from study.paradigms.proactive import PROACTIVE
from study.paradigms.proactive import assistant
from study.paradigms.proactive.context import HistoryError, parse_history
from study.paradigms.proactive.engine import ProactiveEngine

blueprint = Blueprint("proactive_api", __name__, url_prefix="/api/sessions")

MAX_HISTORY = 2_000
# The participant's line while the model endpoint loads its model (the editor adds when it asks again).
GETTING_READY = "the assistant is getting ready"


def proactive_engine() -> ProactiveEngine:
    engines = current_app.extensions
    if "study.proactive" not in engines:
        engines["study.proactive"] = ProactiveEngine(study().suggestions, study().proactive)
    return engines["study.proactive"]


def _checked(body: dict) -> tuple[str, list, list, list, int | None]:
    """The request's parts; the door (schemas/api/proactive-request.schema.json) checked their
    types and sizes, this checks the history's positions against the document."""
    doc = body["doc"]
    history = body.get("history", [])[-MAX_HISTORY:]
    items = parse_history(history, len(doc))
    outcomes = body.get("outcomes", [])
    kept = body.get("kept_words", [])
    return doc, items, outcomes[-MAX_HISTORY:], kept[-MAX_HISTORY:], body.get("idle_ms")


@blueprint.post("/<session_id>/proactive")
@contract.declare(
    "Ask for a proactive ghost-text suggestion (MindCopilot L1-L3)", body="api/proactive-request.schema.json",
    responses={200: "api/responses.schema.json#/$defs/proactive", 409: contract.ERROR, 429: contract.ERROR,
               502: contract.ERROR, 503: contract.ERROR, 504: contract.ERROR},
)  # fmt: skip
@precedence.watched
def suggest(session_id):
    session = writing_session_or_409(session_id)
    condition = study().condition(session["condition"])
    if condition.paradigm not in PROACTIVE:
        # Not the condition's name: the participant's browser may read this answer.
        return jsonify(error="this session's suggestions do not come from ghost text"), 409
    try:
        doc, history, outcomes, kept, idle_used = _checked(contract.body())
    except HistoryError as error:
        return jsonify(error=str(error)), 400

    if condition.paradigm == "L1":
        history = []  # stateless: what the browser sent is not used (Table 3)
    # L3's writing stage counts the writer's words: the prompt's, which the editor's text
    # starts with, are taken off (study.paradigms.proactive.policy).
    prompt = study().prompt(session_or_404(session_id)["prompt_code"]).text if condition.paradigm == "L3" else ""
    try:
        with model_calls.slot():
            suggestion_id = model_calls.admit(session_id, condition, confirm_writing=True)
            result = proactive_engine().suggest(condition, doc, history, outcomes, kept, prompt)
    except model_calls.Refused as refusal:
        return refusal.response()
    item = {"index": 0, "original": result.suggestion, "trimmed": result.suggestion.strip(),
            "probability": result.probability}
    record = {
        **result.parameters, "paradigm": result.paradigm, "strategy": result.strategy,
        "stage": result.stage, "idle_ms_used": idle_used, "idle_ms_next": result.idle_ms,
        "context": result.context, "prompt_hash": result.prompt_hash,
        "rationale": result.rationale, "history_items": len(history),
    }
    model_calls.settle(
        suggestion_id, condition, answered_model=result.answered_model, parameters=record,
        raw=result.raw, suggestions=[item] if not result.error else [],
        latency_ms=result.latency_ms, error=result.error,
    )  # fmt: skip
    if result.error and result.retry_after is not None:
        wait = max(1, round(result.retry_after))
        response = jsonify(error=GETTING_READY, retry_after=wait)
        response.headers["Retry-After"] = str(wait)
        return response, 503
    if result.error:
        return model_calls.unavailable("proactive suggestion", session_id, result.error, result.timed_out)
    return jsonify(
        # No strategy ("L1"/"L2" would name a paradigm): the event API fills it into the
        # suggestion-open record from this request's row (study.paradigms.proactive.arrival).
        suggestionId=suggestion_id, suggestion=item, rationale=result.rationale,
        stage=result.stage, idleMs=result.idle_ms,
        maxTokens=result.max_tokens,
    )


@blueprint.post("/<session_id>/assistant")
@contract.declare(
    "Ask L0's assistant panel (MindCopilot's user-initiated paradigm)", body="api/assistant-request.schema.json",
    responses={200: "api/assistant-response.schema.json", 409: contract.ERROR, 429: contract.ERROR,
               502: contract.ERROR, 503: contract.ERROR, 504: contract.ERROR},
)  # fmt: skip
@precedence.watched
def ask_assistant(session_id):
    session = writing_session_or_409(session_id)
    condition = study().condition(session["condition"])
    if not study().proactive.assistant_panel(condition.paradigm):
        return jsonify(error="this session has no assistant panel"), 409
    body = contract.body()
    try:
        with model_calls.slot():
            chat_id = model_calls.admit(session_id, condition, confirm_writing=True)
            result = assistant.answer(study().suggestions, study().proactive, condition, body["doc"], body["request"])
    except model_calls.Refused as refusal:
        return refusal.response()
    item = {"index": 0, "original": result.text, "trimmed": result.text.strip(), "probability": None}
    model_calls.settle(
        chat_id, condition, answered_model=result.answered_model,
        parameters={**result.parameters, "paradigm": condition.paradigm, "request": body["request"]},
        raw=[{"text": result.text, "finish_reason": result.finish_reason}],
        suggestions=[item] if not result.error else [], latency_ms=result.latency_ms, error=result.error,
    )  # fmt: skip
    if result.error:
        return model_calls.unavailable("assistant panel", session_id, result.error, result.timed_out)
    return jsonify(chatId=chat_id, response=result.text)
