"""The writing stage of the participant's path: the editor page (templates/writing.html: the
core's study/static/editor*.js and each answering paradigm's `scripts`) and its finish button.
Its routes belong to the participant's blueprint (study.server.participant), so their endpoints
are `participant.writing` and `participant.finish_writing`; create_app imports this module with
that one.
"""

from __future__ import annotations

import time

from flask import jsonify, render_template, url_for

from study import paradigms
from study.config_texts import MIN_TIME_SLACK_SECONDS
from study.config_types import NO_TAB_CONTROLS
from study.curation import origin
from study.server import arrival, contract, stages
from study.server.context import engine, limits, session_or_404, study
from study.server.participant import blueprint
from study.server.stages import at_stage, stage_url
from study.store import events as event_store
from study.store import reading
from study.store.db import storable_text
from study.store.coordination import clock

# -- writing ----------------------------------------------------------------------------------


@blueprint.get("/s/<session_id>/writing", endpoint="writing")
@contract.declare("The writing editor", responses={200: None, 302: None})
@at_stage("writing")
def writing_page(session_id, session):
    prompt = study().prompt(session["prompt_code"])
    condition = study().condition(session["condition"])
    with reading(engine()) as connection:
        stored = event_store.totals(connection, session_id)
        elapsed = clock(connection) - session["writing_started_at"]
    boot = {
        "sessionId": session_id,
        # Quill, which CoAuthor used, always ends a document with a newline; currentDoc keeps it.
        "prompt": prompt.text.rstrip("\n") + "\n",
        # No decoding setting: the event API fills them in; none at all without a Tab list.
        "controls": condition.page_controls() if paradigms.counts_suggestions(condition) else dict(NO_TAB_CONTROLS),
        "minSeconds": study().min_seconds,
        "elapsedSeconds": elapsed,
        # The number after the last event stored: a browser's copy that stops before it is older
        # than the server's (the writer went on elsewhere), so the page takes the server's.
        "storedNextSeq": 0 if stored.last_seq is None else stored.last_seq + 1,
        # A session that has stored all it may (the page reloaded after its limit): the editor
        # says so at once and offers the finish (editor.js, atLimit).
        "full": arrival.full(stored, limits()),
        "eventsUrl": url_for("events_api.post_events", session_id=session_id),
        "stateUrl": url_for("events_api.state", session_id=session_id),
        "finishUrl": url_for("participant.finish_writing", session_id=session_id),
        # The edits the editor lets in: past them the writer could not finish.
        **contract.edit_limits("event-batch.schema.json", "api/finish-writing.schema.json", "text"),
    }
    # The platform takes the work no later (MTurk's assignment time, Prolific's maximum time):
    # the editor counts its last minutes down (submit-clock.js).
    boot.update(stages.platform_clock(session))
    # What each paradigm's part of the editor needs (its suggestion URL, its settings), from
    # its declaration (study.paradigms.base.Paradigm.editor); the scripts and styles of the
    # paradigms that answer are loaded, and no others, and their markup (`editor_parts`) is
    # there when the boot data has its key: a control arm's page has none (study.control_arm).
    scripts, stylesheets, parts = [], [], []
    for paradigm in paradigms.registered():
        part = paradigm.editor_boot()(study(), condition, session_id) if paradigm.editor else {}
        if part:
            boot.update(part)
            scripts += [url_for(f"{paradigm.name}.static", filename=name) for name in paradigm.scripts]
            stylesheets += [url_for(f"{paradigm.name}.static", filename=name) for name in paradigm.stylesheets]
            parts += [editor_part for editor_part in paradigm.editor_parts if editor_part.key in part]
    if study().outside_paste != "allow":  # study/static/editor-paste.js
        boot["outsidePaste"] = {"mode": study().outside_paste, "minChars": origin.MIN_CHARS}
    return render_template(
        "writing.html", study=study(), session=session, prompt=prompt, boot=boot, parts=parts,
        paradigm_scripts=scripts, paradigm_stylesheets=stylesheets,
    )


@blueprint.post("/s/<session_id>/writing/finish")
@contract.declare(
    "Finish writing (the editor's finish button)", body="api/finish-writing.schema.json",
    responses={200: "api/responses.schema.json#/$defs/next", 409: contract.ERROR},
)  # fmt: skip
def finish_writing(session_id):
    """The finish button: accepted once the minimum time has passed and every event the
    browser numbered (0..last_seq) is stored; otherwise 409 and the browser sends what it
    still holds and retries."""
    session = session_or_404(session_id)
    if session["stage"] != "writing":
        return jsonify(next=stage_url(session))
    body = contract.body()
    last_seq = body["last_seq"]
    if problem := limits().last_seq_error(last_seq):
        return jsonify(error=problem), 400
    with reading(engine()) as connection:
        # Timed by the database's clock, as the start was: on several hosts whose own clocks
        # disagree, one ahead let a writer finish early and one behind held them past the time.
        remaining = session["writing_started_at"] + study().min_seconds - clock(connection)
    if remaining > MIN_TIME_SLACK_SECONDS:
        return jsonify(error=f"please keep writing for {int(remaining)} more seconds"), 409
    with reading(engine()) as connection:
        stored = event_store.totals(connection, session_id).count
        lost = event_store.missing_count(connection, session_id, last_seq)
        missing = event_store.missing_seqs(connection, session_id, last_seq) if lost else []
    if stored == 0:
        # Nothing the writer did has reached the server: there is no writing to submit.
        return jsonify(error="none of your writing has reached the server yet; please keep "
                       "this page open while it is sent, then press Finish again"), 409
    if lost and body.get("pending") != 0:
        return jsonify(error="some events have not reached the server yet", missing=missing), 409
    # pending == 0: the browser holds nothing unsent, so missing events are gone for good (its
    # storage was cleared before they were acknowledged). Blocking would trap the writer; the
    # gap is recorded instead, for the researcher and the curation checks.
    session = stages.advance(
        session_id,
        "writing",
        writing_finished_at=time.time(),
        final_text=storable_text(body.get("text", "")),
        missing_events=lost,
    )
    return jsonify(next=stage_url(session))
