"""The editor's event API: batches of CoAuthor records in, acknowledgements out.

POST /api/sessions/<id>/events  {"events": [{"seq": 0, "eventName": ..., ...}, ...]}
  -> 200 {"acked": [0, 1, ...], "stored": 2, "duplicates": 0}
The format is schemas/event-batch.schema.json. A batch is checked whole before anything is
written, then stored in one transaction: it is all stored or not at all.
Each batch must also fit the session's storage quota (past it: 422 with `"full": true`, no
later event of the session will be stored) and replay on top of what is stored
and hold to each paradigm's rules for the records it adds (study.paradigms.base: `events`; e.g.
ghost text's: the session's paradigm, its own suggestion ids and their texts): 422 otherwise,
with the event at fault named.
GET /api/sessions/<id>/state -> {"doc": text, "next_seq": n}, the server's copy of the
document (for a browser that lost its local copy); in a proactive session (MindCopilot L1-L3)
also `proactive`: the interaction memory L2 and L3 requests carry, rebuilt from the stored
events (study.paradigms.proactive.memory). It answers only while the session is at the
writing stage: afterwards the text is the researchers' alone (README, "The participant's path").
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from flask import Blueprint, Flask, current_app, jsonify
from sqlalchemy import Engine, Table

from study import paradigms
from study.config_types import NO_TAB_CONTROLS
from study.curation.replay import DeltaError, replay
from study.server import arrival, contract
from study.server.context import WRITING_SESSIONS, engine, limits, session_brief_or_404, session_or_404, study
from study.store import events as event_store
from study.store import reading
from study.store.db import events

blueprint = Blueprint("events_api", __name__, url_prefix="/api/sessions")

# Events are accepted until the writer leaves the editor; later ones would change a finished text.
OPEN_STAGES = {"writing"}


@blueprint.post("/<session_id>/events")
@contract.declare(
    "Store a batch of editor events", body="event-batch.schema.json", refusal=422,
    responses={200: "api/responses.schema.json#/$defs/acked", 409: contract.ERROR, 422: contract.ERROR},
)  # fmt: skip
def post_events(session_id):
    return respond(acknowledge(current_app._get_current_object(), session_id, contract.body()))


class Acknowledgement(bytes):
    """A batch's answer: the JSON body of its 200. The view makes it a response; the event lane
    (study.server.event_lane) hands it to the server itself, without werkzeug's response
    object."""


@dataclass(frozen=True)
class Refusal:
    """A batch refused (422) or too late (409), nothing of it stored: the view words it as
    {"error": ...}. The event lane hands such a batch to Flask, which refuses it again."""

    status: int
    error: str
    # The session has stored all it may (event_store.Full): the page stops logging and offers
    # the finish, which takes the session as stored.
    full: bool = False


def respond(answer: Acknowledgement | Refusal):
    """A view's answer for what `acknowledge` (or `store`) returned."""
    if type(answer) is Acknowledgement:
        return current_app.response_class(answer, mimetype="application/json")
    if answer.full:
        return jsonify(error=answer.error, full=True), answer.status
    return jsonify(error=answer.error), answer.status


def acknowledge(app: Flask, session_id: str, body: dict) -> Acknowledgement | Refusal:
    """The view's work for `body`, checked at the door against schemas/event-batch.schema.json
    (a compiled predicate: the hot path of a study, study.server.contract). Nothing here needs
    a request's or an app's context (the event lane runs it without either); an unknown session
    is aborted with 404."""
    try:
        return _post_events(app, session_id, body)
    except event_store.SessionMoved:  # e.g. finished at another worker: read it again
        WRITING_SESSIONS.forget(session_id)
        return _post_events(app, session_id, body)


_UNKNOWN = object()


def _post_events(app: Flask, session_id: str, body: dict) -> Acknowledgement | Refusal:
    condition = WRITING_SESSIONS.get(session_id, _UNKNOWN)
    if condition is _UNKNOWN:
        session = session_brief_or_404(session_id, app)
    else:
        session = {"session_id": session_id, "stage": "writing", "condition": condition}
    database = engine(app)
    rules = [module for module in (p.event_rules() for p in paradigms.registered()) if module]
    if session["condition"]:
        # The browser is not told its decoding settings (Condition.page_controls) nor its
        # paradigm (issue 25): the records get them here, before the paradigms' rules compare
        # them with the session (e.g. study.paradigms.proactive.arrival).
        fill_controls(study(app).condition(session["condition"]), body)
        for module in rules:
            module.fill(database, session_id, study(app).condition(session["condition"]), body)
    batch = body["events"]
    if session["stage"] not in OPEN_STAGES:
        return closed(database, session, batch)
    checks = arrival.checker(session_id, batch, limits(app), database)
    check, committed = checks.check, [checks.committed]
    try:
        paradigm = study(app).condition(session["condition"]).paradigm
        for module in rules:
            check = module.with_rules(check, session_id, paradigm, batch)
            committed.append(getattr(check, "committed", None))
    except event_store.Refused as refusal:
        return Refusal(422, str(refusal))
    if condition is _UNKNOWN:
        WRITING_SESSIONS.remember(session_id, session["condition"])
    return _stored(database, session_id, batch, check, expect=(session["stage"], session["condition"]),
                   known=checks.known, committed=[hook for hook in committed if hook is not None])  # fmt: skip


def fill_controls(condition, body: dict) -> None:
    """Every record of a batch (checked at the door) gets the condition's decoding settings,
    whatever the page sent: it was given them empty (config.Condition.page_controls). A
    session whose paradigm has no Tab list gets all six empty (config_types.NO_TAB_CONTROLS)."""
    # A session without a Tab list (a chat arm's) ran no Tab settings: its records say none.
    hidden = condition.decoding_record if paradigms.counts_suggestions(condition) else NO_TAB_CONTROLS
    for event in body["events"]:
        event.update(hidden)


def closed(engine: Engine, session: dict, batch: list[dict], table: Table = events) -> Acknowledgement | Refusal:
    """A batch for a session past its open stage: resends of events already stored are
    harmless and acknowledged; new ones are refused (the chat page's events too)."""
    with reading(engine) as connection:
        stored = set(event_store.stored_seqs(connection, session["session_id"], table))
    seqs = sorted({item["seq"] for item in batch})
    if all(seq in stored for seq in seqs):
        return _acknowledgement(event_store.BatchResult(acked=seqs, stored=0))
    return Refusal(409, f"session is at stage '{session['stage']}' and takes no new events")


def store(session_id: str, batch: list[dict], check: event_store.BatchCheck, table: Table = events, expect=None,
          known=None, committed=()):
    """Store a checked batch and answer with what was acknowledged, or 422 with the refusal.
    `expect`: the session's (stage, condition), confirmed as it is stored (SessionMoved);
    `known`: as event_store.ingest's. `committed`: what the checks remember once the batch is
    committed (arrival.Arrival.committed, a paradigm's rules'), called then and only then."""
    return respond(_stored(engine(), session_id, batch, check, table, expect, known, committed))


def _stored(engine: Engine, session_id: str, batch: list[dict], check: event_store.BatchCheck, table: Table = events,
            expect=None, known=None, committed=()) -> Acknowledgement | Refusal:
    """`store`'s work."""
    try:
        result = event_store.ingest(engine, session_id, batch, check, table=table, expect=expect, known=known)
    except event_store.Conflict as conflict:
        return Refusal(409, str(conflict))
    except event_store.Full as full:
        return Refusal(422, str(full), full=True)
    except event_store.Refused as refusal:
        return Refusal(422, str(refusal))
    for hook in committed:
        hook()
    return _acknowledgement(result)


def _acknowledgement(result: event_store.BatchResult) -> Acknowledgement:
    # orjson, not jsonify: the acknowledgement is the event API's every answer (its CPU budget).
    answer = {"acked": result.acked, "stored": result.stored, "duplicates": result.duplicates}
    return Acknowledgement(orjson.dumps(answer))


@blueprint.get("/<session_id>/state")
@contract.declare(
    "The server's copy of an editor session's document",
    responses={200: "api/responses.schema.json#/$defs/editorState", 409: contract.ERROR},
)  # fmt: skip
def state(session_id):
    """What a browser that lost its own copy needs to carry on: the document, the next sequence
    number, the two persisting indices of the record, and the last list shown (for Shift+Tab).
    Only the editor asks for it, and only while the writer writes: a finished session's text
    is not served to whoever holds its id."""
    session = session_or_404(session_id)
    if session["stage"] not in OPEN_STAGES:
        return jsonify(error=f"session is at stage '{session['stage']}'; its text is no longer served"), 409
    with reading(engine()) as connection:
        records = event_store.records(connection, session_id)
        seqs = event_store.stored_seqs(connection, session_id)
    if not records:
        return jsonify(doc=None, next_seq=0, stored=0)
    try:
        doc = replay(records).text
    except (DeltaError, ValueError) as exc:
        return jsonify(error=f"stored events do not replay: {exc}"), 500
    shown = next(
        (r["currentSuggestions"] for r in reversed(records) if r["eventName"] == "suggestion-open"),
        [],
    )
    extra = {}
    for paradigm in paradigms.registered():  # e.g. ghost text's interaction memory
        if state := paradigm.editor_state():
            extra.update(state(records))
    return jsonify(
        doc=doc,
        next_seq=seqs[-1] + 1,
        stored=len(seqs),
        suggestion_index=records[-1]["currentSuggestionIndex"],
        hover_index=records[-1]["currentHoverIndex"],
        last_suggestions=shown,
        **extra,
    )
