"""The chat page's API (static/chat.js).

GET  /api/sessions/<id>/chat/state
  -> {"messages": [{"seq", "role", "content"}], "pending_client_id", "exchanges",
      "owed": [{"survey", "occasion"}], "document", "next_seq"}: what a reloaded page (or one
      whose server restarted) needs; 409 once the session has left the chat (as the editor's
      state): a finished conversation is not served to whoever holds its id.
POST /api/sessions/<id>/chat/messages {"client_id": "...", "content": "..."}
  -> 200 {"user": {...}, "assistant": {...}, "exchanges", "owed"}
  -> 409 {"error", "owed"} while a blocking in-session survey is due
  -> 429 / 502 / 503 / 504 {"error"} when the model is not asked (a limit, every slot busy) or
     fails; the user message is kept and the same request (same client_id) asks again.
  With "stream": true and a reply to write, 200 application/x-ndjson, one JSON object a line:
  {"user"} at once, {"delta": "..."} as the model writes, then the 200 answer above or
  {"error", "status", "cut_off"} with the status the JSON answer would have had. Only the
  whole reply is stored; a participant who leaves mid-stream finds it stored on their return,
  and a stream the endpoint cut off stores no reply (the model call's row says "cut off").
POST /api/sessions/<id>/chat/events  schemas/chat-event-batch.schema.json -> {"acked": [...]}
  -> 422 past the session's storage quota ([session] max_events, max_bytes), as the editor's.
Every model call goes through study.server.model_calls: recorded in suggestion_requests (mode
"chat_reply") before the model is asked, within the per-session and study-wide limits, and a
failure reaches the participant as a calm line while `study status` shows the reason.
"""

from __future__ import annotations

import json
import logging

from flask import Blueprint, Response, jsonify, stream_with_context

from study import precedence
from study.paradigms.chat import assistant
from study.server import arrival, contract, events_api, model_calls
from study.server.surveys import owed_surveys
from study.server.context import engine, limits, session_or_404, study
from study.paradigms.chat import store as chat_store
from study.store import events as event_store
from study.store import group_commit, provenance, reading, writing
from study.store.chat_tables import chat_events
from study.store.db import storable_text

blueprint = Blueprint("chat_api", __name__, url_prefix="/api/sessions")
logger = logging.getLogger(__name__)

# What the participant reads when the assistant cannot answer (the page prefixes "The assistant
# did not answer: "); never the endpoint's address or status.
UNAVAILABLE = "it is not available right now; please try again in a moment"
BUSY = "it is busy right now; please try again in a moment"


def _owed_json(owed) -> list[dict]:
    return [{"survey": survey.name, "occasion": occasion} for survey, occasion in owed]


def _public(message: dict) -> dict:
    return {"seq": message["seq"], "role": message["role"], "content": message["content"]}


@blueprint.get("/<session_id>/chat/state")
@contract.declare(
    "What a reloaded chat page needs", responses={200: "api/responses.schema.json#/$defs/chatState"}
)
def state(session_id):
    session = session_or_404(session_id)
    if session["stage"] != "chat":
        return jsonify(error=f"session is at stage '{session['stage']}'; its conversation is no longer served"), 409
    with reading(engine()) as connection:
        history = chat_store.messages(connection, session_id)
        owed = owed_surveys(connection, session)
        document, next_seq = chat_store.document_from_events(connection, session_id)
        stored = event_store.stored_seqs(connection, session_id, chat_events)
    unanswered = history[-1] if history and history[-1]["role"] == "user" else None
    return jsonify(
        messages=[_public(m) for m in history],
        # A message stored without its reply (the server died while the model answered): the
        # page sends it again under this id and gets the reply, not a second copy.
        pending_client_id=unanswered["client_id"] if unanswered else None,
        exchanges=chat_store.exchanges(history),
        owed=_owed_json(owed),
        document=document,
        next_seq=(stored[-1] + 1) if stored else 0,
        replayed_seq=next_seq,
    )


@blueprint.post("/<session_id>/chat/messages")
@contract.declare(
    "Send a chat message and get the assistant's reply", body="api/chat-message.schema.json",
    responses={200: "api/responses.schema.json#/$defs/chatSent", 409: contract.ERROR, 429: contract.ERROR,
               502: contract.ERROR, 503: contract.ERROR, 504: contract.ERROR},
)  # fmt: skip
@precedence.watched
def send(session_id):
    session = session_or_404(session_id)
    if session["stage"] != "chat":
        return jsonify(error=f"session is at stage '{session['stage']}', not chat"), 409
    body = contract.body()
    client_id = body["client_id"]
    content = storable_text(body["content"]).strip()  # as stored (chat_store.inserting_message)
    limit = study().chat.max_message_chars
    if not content or len(content) > limit:
        return jsonify(error=f"a message needs 1 to {limit} characters"), 400

    with writing(engine()) as connection:
        user = chat_store.by_client_id(connection, session_id, client_id)
        history = chat_store.messages(connection, session_id)
        if user is None:
            owed = owed_surveys(connection, session)
            if owed:
                return jsonify(error="please submit the rating first", owed=_owed_json(owed)), 409
            if history and history[-1]["role"] == "user":
                return jsonify(
                    error="your previous message has no reply yet; send it again first",
                    pending_client_id=history[-1]["client_id"],
                ), 409  # fmt: skip
            user = chat_store.add_message(connection, session_id, "user", content, client_id=client_id)
            history.append(user)
        answered = next((m for m in history if m["seq"] == user["seq"] + 1), None)
    if answered is None and body.get("stream"):
        relay = _relay(session, session_id, user)
        return Response(stream_with_context(relay), mimetype="application/x-ndjson",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})  # fmt: skip
    if answered is None:
        answered, error = _ask(session, session_id, user)
        if error is not None:
            return error
    return jsonify(_sent(session, session_id, user, answered))


def _sent(session: dict, session_id: str, user: dict, answered: dict) -> dict:
    with reading(engine()) as connection:
        history = chat_store.messages(connection, session_id)
        owed = owed_surveys(connection, session)
    return {"user": _public(user), "assistant": _public(answered),
            "exchanges": chat_store.exchanges(history), "owed": _owed_json(owed)}  # fmt: skip


def _read(session_id: str, user: dict, condition) -> tuple[list[dict], assistant.Window]:
    """What the model reads for the reply to `user` ([chat] context_chars)."""
    with reading(engine()) as connection:
        history = [m for m in chat_store.messages(connection, session_id) if m["seq"] <= user["seq"]]
        document, _ = chat_store.document_from_events(connection, session_id)
    # The tighter of the two bounds: the window the model reads ([chat] context_chars, 0: none)
    # and the cap on any text sent to the model ([chat] history_chars, issue 24).
    bound = min(b for b in (study().chat.context_chars, study().chat.history_chars, 10**9) if b)
    return assistant.window(condition, history, document, bound)


def _ask(session: dict, session_id: str, user: dict):
    """The model's reply to the conversation up to `user`, stored; or an error response."""
    condition = study().condition(session["condition"])
    messages, read = _read(session_id, user, condition)
    try:
        with model_calls.slot(BUSY):
            request_id = model_calls.admit(session_id, condition, BUSY)
            result = assistant.reply(
                study().suggestions, condition, [], study().chat.max_tokens, messages, read
            )
    except model_calls.Refused as refusal:
        return None, refusal.response()
    reply = _store(session_id, user, condition, request_id, result)
    if reply is None:
        return None, model_calls.unavailable("chat reply", session_id, result.error, result.timed_out, UNAVAILABLE)
    return reply, None


def _relay(session: dict, session_id: str, user: dict):
    """The streamed answer's lines (see the module's docstring)."""
    yield _line({"user": _public(user)})
    condition = study().condition(session["condition"])
    messages, read = _read(session_id, user, condition)
    try:
        with model_calls.slot(BUSY):
            request_id = model_calls.admit(session_id, condition, BUSY)
            stream = assistant.ReplyStream(study().suggestions, condition, messages, study().chat.max_tokens, read)
            pieces = iter(stream)
            try:
                for piece in pieces:
                    yield _line({"delta": piece})
            except GeneratorExit:
                # The participant left mid-reply: finish it, so their return finds it stored whole.
                for _ in pieces:
                    pass
                _store(session_id, user, condition, request_id, stream.result)
                raise
            reply = _store(session_id, user, condition, request_id, stream.result)
    except model_calls.Refused as refusal:
        yield _line({"error": refusal.message, "status": refusal.status, "cut_off": False})
        return
    result = stream.result
    if reply is None:
        logger.warning("chat reply for session %s failed: %s", session_id, result.error)
        yield _line({"error": UNAVAILABLE, "status": 504 if result.timed_out else 502, "cut_off": result.cut_off})
        return
    yield _line(_sent(session, session_id, user, reply))


def _line(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False) + "\n"


def _store(session_id: str, user: dict, condition, request_id: int, result: assistant.Reply) -> dict | None:
    """Settle the model call and store the reply; None when there is no reply to store."""
    result.parameters["reply_to"] = user["seq"]  # the export finds each reply's window by it
    outcome = {
        "answered_model": result.answered_model, "parameters": result.parameters,
        "raw": [{"text": result.text, "finish_reason": "cut_off" if result.cut_off else result.finish_reason}],
        "suggestions": [result.text] if result.text and result.error is None else [],
        "latency_ms": result.latency_ms, "error": result.error,
    }  # fmt: skip
    if result.error is not None:
        model_calls.settle(request_id, condition, **outcome)
        return None
    reply = chat_store.storing_reply(
        session_id, user["seq"] + 1, result.text, provenance.answering(result.answered_model),
        result.latency_ms, model_calls.settling(request_id, condition, **outcome),
    )  # fmt: skip
    return group_commit.run_staged(engine(), reply, key=None, ahead=True)


@blueprint.post("/<session_id>/chat/events")
@contract.declare(
    "Store a batch of chat page events", body="chat-event-batch.schema.json", refusal=422,
    responses={200: "api/responses.schema.json#/$defs/acked", 409: contract.ERROR, 422: contract.ERROR},
)  # fmt: skip
def post_events(session_id):
    session = session_or_404(session_id)
    batch = contract.body()["events"]
    if session["stage"] != "chat":
        return events_api.respond(events_api.closed(engine(), session, batch, chat_events))
    check = arrival.quota_checker(session_id, limits(), chat_events)
    return events_api.store(session_id, batch, check, chat_events)
