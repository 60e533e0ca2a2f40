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

One message costs two write transactions, each in stages of the process's group commit
(study.store.group_commit) and ahead of the writers' event batches, since the participant waits
on them: the message with its model call's admission (stored before the model is asked;
model_calls.admission), and the call's outcome with the reply (stored before the participant is
answered). The conversation is read once, in the first, on the driver, which also confirms the
session is writing (the worker may serve it from memory: study.server.context
`writing_session_or_409`); the reply's seq is the message's next. On PostgreSQL the first is two
round trips, the second one, each COMMIT in the last. The message's COMMIT waits for the disk,
as the writer's text must (a lone admission's does not). A message the model is not asked for
(the limits refuse it, no slot is free) is stored all the same.
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from study import precedence
from study.paradigms.chat import arm, assistant
from study.paradigms.chat import store as chat_store
from study.server import contract, model_calls
from study.server.context import WRITING_SESSIONS, engine, limits, session_brief_or_404, study, writing_session_or_409
from study.store import group_commit, provenance, reading
from study.store import sessions as session_store
from study.store.db import storable_text

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
    content = storable_text(body["content"]).strip()  # as stored (chat_store.inserting_message)
    if not content or len(content) > arm.MAX_MESSAGE_CHARS:
        return jsonify(error=f"a message needs 1 to {arm.MAX_MESSAGE_CHARS} characters"), 400
    condition = study().condition(session["condition"])
    # The slot is taken first, so that a free one lets the message's transaction admit the
    # model call too; the message is kept either way.
    with model_calls.slot_if_free() as free:
        admission = model_calls.admission(session_id, condition, BUSY) if free else None
        keep = _keep(session_id, condition.name, body["client_id"], content, admission)
        history_now, user, admitted = group_commit.run_staged(engine(), keep, key=None, ahead=True)
        if history_now is None:  # no longer writing (finished, say, in another tab)
            WRITING_SESSIONS.forget(session_id)
            return _refusal(session_brief_or_404(session_id)) or (jsonify(error=model_calls.MOVED), 409)
        if user is None:
            return jsonify(error="your previous message has no reply yet; send it again first",
                           pending_client_id=history_now[-1]["client_id"]), 409  # fmt: skip
        answered = next((m for m in history_now if m["seq"] == user["seq"] + 1), None)
        exchanges = chat_store.exchanges(history_now)
        if answered is None:
            try:
                model_calls.counted(free, BUSY)
                request_id = model_calls.admitted(session_id, admitted)
            except model_calls.Refused as refusal:
                return refusal.response()
            asked = [m for m in history_now if m["seq"] <= user["seq"]]
            answered, error = _ask(condition, session_id, asked, request_id)
            if error is not None:
                return error
            exchanges += 1
    return jsonify(user=_public(user), assistant=_public(answered), exchanges=exchanges, owed=[])


def _keep(session_id: str, condition: str, client_id: str, content: str, admission):
    """A staged work (study.store.group_commit.run_staged): the conversation, the writer's
    message in it and the admission of its model call (the `admission`'s outcome, None when the
    message has its reply or there is no `admission`: no slot was free). The message is the one
    stored under `client_id`, else `content` stored now, in the admission's transaction when
    there is one (model_calls.admission); it is None while an earlier message waits for its
    reply (nothing stored). (None, None, None) when the session is no longer writing in
    `condition` (nothing stored). It returns its refusals, never raises one. The participant
    waits on it, so it goes ahead of the event batches."""

    def work(connection) -> tuple[list[dict] | None, dict | None, int | model_calls.Refused | None]:
        rows, ((writing,),) = yield [
            chat_store.reading_conversation(session_id), session_store.at_stage(session_id, "writing", condition),
        ]  # fmt: skip
        if not writing:
            return None, None, None
        history_now = chat_store.conversation_of(rows)
        user = next((m for m in history_now if m["client_id"] == client_id), None)
        if user is not None:  # sent again: answered, or still waiting for its reply
            if admission is None or history_now[-1] is not user:
                return history_now, user, None
            return history_now, user, (yield from admission(connection))
        if history_now and history_now[-1]["role"] == "user":
            return history_now, None, None
        seq = history_now[-1]["seq"] + 1 if history_now else 0
        statement, user = chat_store.inserting_message(session_id, seq, "user", content, client_id=client_id)
        if admission is None:
            yield group_commit.Last([statement])
            return [*history_now, user], user, None
        return [*history_now, user], user, (yield from admission(connection, [statement]))

    return work


def _ask(condition, session_id: str, history: list[dict], request_id: int):
    """The model's reply to `history` (which ends with the writer's message) for the admitted
    call `request_id`, stored; or an error response."""
    # The conversation's newest turns within [suggestions] prompt_chars, the bound on what a Tab
    # request sends too: a long chat would otherwise send the model every turn (issue 24).
    messages, read = assistant.window(condition, history, "", limits().prompt_chars)
    result = assistant.reply(study().suggestions, condition, history, arm.MAX_TOKENS, messages, read)
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
        session_id, history[-1]["seq"] + 1, result.text, provenance.answering(result.answered_model),
        result.latency_ms, model_calls.settling(request_id, condition, **outcome),
    )  # fmt: skip
    return group_commit.run_staged(engine(), reply, key=None, ahead=True), None
