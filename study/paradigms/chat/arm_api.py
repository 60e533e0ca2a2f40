"""The chat arm's API: the panel beside a writing session's editor (static/editor-chat.js).

GET  /api/sessions/<id>/assistant/messages -> {"messages", "pending_client_id"} (a reloaded page)
POST /api/sessions/<id>/assistant/messages {"client_id", "content"} -> 200 {"user", "assistant",
     "exchanges", "owed"}; 409 unless the session is writing in a chat arm, and 409 {"error",
     "pending_client_id"} while another message of the session waits for its reply (nothing is
     stored: the page asks for that one first); 429 / 502 / 503 / 504 when the model is not
     asked or fails (the message is kept; the same client_id asks again, and a client_id already
     answered gets its stored reply without asking the model).
The conversation is stored as a chat study's (study.paradigms.chat.store) and every model call goes
through study.server.model_calls, as the chat study's replies do (study.paradigms.chat.api).

One message costs three write transactions, each in stages of the process's group commit
(study.store.group_commit) and ahead of the writers' event batches, since the participant waits
on them: the message (stored before the model is asked), the model call's admission
(model_calls.admit), and the call's outcome with the reply (stored before the participant is
answered). The conversation is read once, in the first, on the driver, which also confirms the
session is writing (the worker may serve it from memory: study.server.context
`writing_session_or_409`); the reply's seq is the message's next. On PostgreSQL the first is two
round trips, the others one each, each COMMIT in the last.
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from study import precedence
from study.paradigms.chat import arm, assistant
from study.paradigms.chat import store as chat_store
from study.server import contract, model_calls
from study.server.context import WRITING_SESSIONS, engine, session_brief_or_404, study, writing_session_or_409
from study.store import group_commit, reading
from study.store import sessions as session_store

blueprint = Blueprint("chat_arm_api", __name__, url_prefix="/api/sessions")

UNAVAILABLE = "it is not available right now; please try again in a moment"
BUSY = "it is busy right now; please try again in a moment"


def _public(message: dict) -> dict:
    return {"seq": message["seq"], "role": message["role"], "content": message["content"]}


def _refusal(session: dict):
    """Why this session may not use the panel, as a response, or None."""
    if session["stage"] != "writing":
        return jsonify(error=f"session is at stage '{session['stage']}', not writing"), 409
    if not arm.is_chat_arm(study().condition(session["condition"])):
        return jsonify(error="this session's condition has no chat assistant"), 409
    return None


@blueprint.get("/<session_id>/assistant/messages")
@contract.declare(
    "The chat arm's conversation so far", responses={200: "api/chat-arm.schema.json#/$defs/history", 409: contract.ERROR}
)
def history(session_id):
    session = session_brief_or_404(session_id)
    if refused := _refusal(session):
        return refused
    with reading(engine()) as connection:
        messages = chat_store.conversation(connection, session_id)
    unanswered = messages[-1] if messages and messages[-1]["role"] == "user" else None
    return jsonify(messages=[_public(m) for m in messages],
                   pending_client_id=unanswered["client_id"] if unanswered else None)  # fmt: skip


@blueprint.post("/<session_id>/assistant/messages")
@contract.declare(
    "Ask the chat arm's assistant", body="api/chat-message.schema.json",
    responses={200: "api/responses.schema.json#/$defs/chatSent", 409: contract.ERROR, 429: contract.ERROR,
               502: contract.ERROR, 503: contract.ERROR, 504: contract.ERROR},
)  # fmt: skip
@precedence.watched
def send(session_id):
    # A session this worker remembers writing is not read here: storing the message confirms it.
    session = writing_session_or_409(session_id)
    if refused := _refusal(session):
        return refused
    body = contract.body()
    content = body["content"].strip()
    if not content or len(content) > arm.MAX_MESSAGE_CHARS:
        return jsonify(error=f"a message needs 1 to {arm.MAX_MESSAGE_CHARS} characters"), 400
    keep = _keep(session_id, session["condition"], body["client_id"], content)
    history_now, user = group_commit.run_staged(engine(), keep, key=None, ahead=True)
    if history_now is None:  # no longer writing (finished, say, in another tab)
        WRITING_SESSIONS.forget(session_id)
        return _refusal(session_brief_or_404(session_id)) or (jsonify(error=model_calls.MOVED), 409)
    if user is None:
        return jsonify(error="your previous message has no reply yet; send it again first",
                       pending_client_id=history_now[-1]["client_id"]), 409  # fmt: skip
    answered = next((m for m in history_now if m["seq"] == user["seq"] + 1), None)
    exchanges = chat_store.exchanges(history_now)
    if answered is None:
        answered, error = _ask(session, session_id, [m for m in history_now if m["seq"] <= user["seq"]])
        if error is not None:
            return error
        exchanges += 1
    return jsonify(user=_public(user), assistant=_public(answered), exchanges=exchanges, owed=[])


def _keep(session_id: str, condition: str, client_id: str, content: str):
    """A staged work (study.store.group_commit.run_staged): the conversation and the writer's
    message in it, the one stored under `client_id`, else `content` stored now; None while an
    earlier message waits for its reply (nothing stored); (None, None) when the session is no
    longer writing in `condition` (nothing stored). It returns its refusal, never raises one.
    The participant waits on it, so it goes ahead of the event batches."""

    def work(_connection) -> tuple[list[dict] | None, dict | None]:
        rows, ((writing,),) = yield [
            chat_store.reading_conversation(session_id), session_store.at_stage(session_id, "writing", condition),
        ]  # fmt: skip
        if not writing:
            return None, None
        history_now = chat_store.conversation_of(rows)
        user = next((m for m in history_now if m["client_id"] == client_id), None)
        if user is not None:
            return history_now, user
        if history_now and history_now[-1]["role"] == "user":
            return history_now, None
        seq = history_now[-1]["seq"] + 1 if history_now else 0
        statement, user = chat_store.inserting_message(session_id, seq, "user", content, client_id=client_id)
        yield group_commit.Last([statement])
        return [*history_now, user], user

    return work


def _ask(session: dict, session_id: str, history: list[dict]):
    """The model's reply to `history` (which ends with the writer's message), stored; or an error response."""
    condition = study().condition(session["condition"])
    try:
        with model_calls.slot(BUSY):
            request_id = model_calls.admit(session_id, condition, BUSY)
            result = assistant.reply(study().suggestions, condition, history, arm.MAX_TOKENS)
    except model_calls.Refused as refusal:
        return None, refusal.response()
    outcome = {
        "answered_model": result.answered_model, "parameters": result.parameters,
        "raw": [{"text": result.text, "finish_reason": result.finish_reason}],
        "suggestions": [result.text] if result.text else [], "latency_ms": result.latency_ms,
        "error": result.error,
    }  # fmt: skip
    if result.error is not None:
        model_calls.settle(request_id, condition, **outcome)
        return None, model_calls.unavailable("chat reply", session_id, result.error, result.timed_out, UNAVAILABLE)
    reply = chat_store.storing_reply(
        session_id, history[-1]["seq"] + 1, result.text, result.answered_model or condition.model,
        result.latency_ms, model_calls.settling(request_id, condition, **outcome),
    )  # fmt: skip
    return group_commit.run_staged(engine(), reply, key=None, ahead=True), None
