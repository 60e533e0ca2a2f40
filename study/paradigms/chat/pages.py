"""The chat document-creation study's pages (CollabLLM §6, App. E steps 1-3; spec C6).

  /s/<id>/intent      step 1: the document type (assigned at random, balanced, stored) and an
                      intent chosen from the offered part of the bank (or assigned);
  /s/<id>/prewriting  step 2: jot down answers to the intent's questions (and own questions);
                      at least `prewriting_min_answers` answers of `prewriting_min_words` words;
  /s/<id>/chat        step 3: the chat with the assistant, the document pane, the blocking
                      periodic rating (an in_session survey) and the finish button, which
                      works after `min_exchanges` exchanges.
Then the participant path's "survey" stage (the final survey) and the completion code.
The API the chat page talks to is study.paradigms.chat.api.
"""

from __future__ import annotations

import time

from flask import Blueprint, jsonify, redirect, render_template, request, url_for

from study.paradigms.chat import assign
from study.server import contract, stages
from study.server.context import engine, limits, session_or_404, study
from study.server.stages import at_stage, stage_url
from study.server.surveys import owed_surveys, render_items
from study.paradigms.chat import store as chat_store
from study.store import reading, writing
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.chat_tables import chat_events
from study.store.db import storable_text
from study.survey.answers import check_page, word_count
from study.survey import placement
from study.survey.definition import from_mapping

# Its pages' templates (templates/chat/) and scripts (static/), and the chat arm's
# editor-chat.js beside a writing study's editor.
blueprint = Blueprint("chat", __name__, template_folder="templates", static_folder="static",
                      static_url_path="/chat-static")  # fmt: skip

OWN_QUESTIONS = 5  # rows for the participant's own questions (App. E: "Add New Question")


def _assigned(session: dict) -> dict | None:
    """The session's chat row, made on first sight: assistant, document type, intents shown;
    None for a new session while every assistant is closed (`assign = false`)."""
    with writing(engine()) as connection:
        row = chat_store.get(connection, session["session_id"])
        if row is None:
            condition = assign.choose_condition(connection, study())
            if condition is None:
                return None
            document_type = assign.choose_type(connection, study(), condition.name)
            session_store.update_session(connection, session["session_id"], condition=condition.name,
                                         paradigm=condition.paradigm)
            row = chat_store.create(
                connection, session["session_id"], document_type, assign.offer(study(), document_type)
            )
    return row


@blueprint.route("/s/<session_id>/intent", methods=["GET", "POST"])
@contract.declare("Choose an intent (CollabLLM step 1)", form="api/pages.schema.json#/$defs/intentForm", responses={200: None, 302: None, 403: None})
@at_stage("intent")
def intent(session_id, session):
    row = _assigned(session)
    if row is None:
        return render_template("message.html", study=study(), title="Closed to new writers",
                               message="This study is not taking new writers at the moment. Thank you for "
                               "your interest; please close this page."), 403  # fmt: skip
    settings = study().chat
    offered = [settings.intent(key) for key in row["offered"]]
    chosen, error = None, None
    if settings.intent_selection == "assign":
        chosen = offered[0]
    elif request.method == "POST":
        chosen = next((i for i in offered if i.key == request.form.get("intent")), None)
        error = None if chosen else "Please choose one of the intents."
    if chosen is not None:
        with writing(engine()) as connection:
            chat_store.update_chat(connection, session_id, intent=chosen.key, intent_at=time.time())
            session_store.update_session(connection, session_id, prompt_code=chosen.key)
        return redirect(stage_url(stages.advance(session_id, "intent")))
    return render_template(
        "chat/intent.html", study=study(), session=session, intents=offered, error=error,
        document_type=settings.document_type(row["document_type"]),
    )  # fmt: skip


def prewriting_survey(intent, own: int = OWN_QUESTIONS):
    """The pre-writing questions as a survey: optional text answers that, when given, need
    `prewriting_min_words` words (CollabLLM: "longer than 8 words")."""
    settings = study().chat
    items = [
        {"id": f"q{n}", "type": "text", "text": question, "required": False,
         "min_words": settings.prewriting_min_words, "rows": 2}
        for n, question in enumerate(intent.questions, start=1)
    ]  # fmt: skip
    items += [
        {"id": f"own{n}", "type": "text", "text": "An answer to your own question", "required": False,
         "min_words": settings.prewriting_min_words, "rows": 2}
        for n in range(1, own + 1)
    ]  # fmt: skip
    return from_mapping({"name": "prewriting", "placement": "before_writing", "items": items})


@blueprint.route("/s/<session_id>/prewriting", methods=["GET", "POST"])
@contract.declare(
    "The pre-writing questions (CollabLLM step 2)", form="api/pages.schema.json#/$defs/prewritingForm",
    responses={200: None, 302: None},
)  # fmt: skip
@at_stage("prewriting")
def prewriting(session_id, session):
    row = _assigned(session)
    settings = study().chat
    chosen = settings.intent(row["intent"])
    survey = prewriting_survey(chosen)
    answers, errors, own_questions, error = {}, {}, {}, None
    if request.method == "POST":
        answers, errors = check_page(survey, 1, request.form.to_dict())
        own_questions = {
            f"own{n}": request.form.get(f"own{n}_question", "").strip()[:300] for n in range(1, OWN_QUESTIONS + 1)
        }
        for key, question in own_questions.items():
            if key in answers and not question:
                errors[key] = "Please write the question you are answering."
        counted = sum(1 for value in answers.values() if word_count(value) >= settings.prewriting_min_words)
        if not errors and counted < settings.prewriting_min_answers:
            error = (
                f"Please answer at least {settings.prewriting_min_answers} questions with at least "
                f"{settings.prewriting_min_words} words each (you have {counted})."
            )
        if not errors and error is None:
            record = [
                {"question": item.text if item.id.startswith("q") else own_questions[item.id],
                 "answer": answers[item.id], "added": not item.id.startswith("q")}
                for item in survey.items if item.id in answers
            ]  # fmt: skip
            with writing(engine()) as connection:
                # Step 3 starts now (the interaction duration's start, spec B3 [I]).
                now = time.time()
                chat_store.update_chat(
                    connection, session_id, prewriting=record, prewriting_at=now, chat_started_at=now
                )
            return redirect(stage_url(stages.advance(session_id, "prewriting", writing_started_at=time.time())))
    items = render_items(survey, 1, answers, "document")
    return render_template(
        "chat/prewriting.html", study=study(), session=session, intent=chosen, items=items,
        answers=answers, errors=errors, error=error, own_questions=own_questions,
    )  # fmt: skip


@blueprint.get("/s/<session_id>/chat")
@contract.declare("The chat page (CollabLLM step 3)", responses={200: None, 302: None})
@at_stage("chat")
def chat_page(session_id, session):
    row = _assigned(session)
    settings = study().chat
    if row["chat_started_at"] is None:
        with writing(engine()) as connection:
            chat_store.update_chat(connection, session_id, chat_started_at=time.time())
    periodic = placement.in_session(study().surveys, "chat", session["condition"])
    boot = {
        "sessionId": session_id,
        "minExchanges": settings.min_exchanges,
        "ratingBeforeFinish": settings.rating_before_finish,
        "documentPane": settings.document_pane,
        "maxMessageChars": settings.max_message_chars,
        "stateUrl": url_for("chat_api.state", session_id=session_id),
        "messagesUrl": url_for("chat_api.send", session_id=session_id),
        "eventsUrl": url_for("chat_api.post_events", session_id=session_id),
        "surveysUrl": url_for("surveys.answer_in_session", session_id=session_id, name="NAME", occasion=0)[: -len("NAME/0")],
        "finishUrl": url_for("chat.finish", session_id=session_id),
        # The edits the document pane lets in: past them the writer could not finish.
        **contract.edit_limits("chat-event-batch.schema.json", "api/chat-finish.schema.json", "document"),
        # MTurk's or Prolific's time for the work, counted down at its end (submit-clock.js).
        **stages.platform_clock(session),
    }
    return render_template(
        "chat/chat.html", study=study(), session=session, boot=boot, settings=settings,
        intent=settings.intent(row["intent"]), prewriting=row["prewriting"] or [],
        document_type=settings.document_type(row["document_type"]),
        periodic=[(s, render_items(s, 1, {}, "document")) for s in periodic],
    )  # fmt: skip


@blueprint.post("/s/<session_id>/chat/finish")
@contract.declare(
    "Finish the chat (the chat page's finish button)", body="api/chat-finish.schema.json",
    responses={200: "api/responses.schema.json#/$defs/next", 409: contract.ERROR},
)  # fmt: skip
def finish(session_id):
    """Accepted after `min_exchanges` exchanges once every numbered event is stored (as the
    writing editor's finish); the document pane's text is kept as the session's final text.
    A rating owed for an earlier exchange blocks it; one owed for the last exchange only with
    `rating_before_finish` (otherwise it is skipped: a finished session takes no rating)."""
    session = session_or_404(session_id)
    if session["stage"] != "chat":
        return jsonify(next=stage_url(session))
    body = contract.body()
    last_seq = body["last_seq"]
    # -1: nothing numbered yet (the exchanges, which finishing needs, are stored by the server).
    if problem := limits().last_seq_error(last_seq, lowest=-1):
        return jsonify(error=problem), 400
    with reading(engine()) as connection:
        done = chat_store.exchanges(chat_store.messages(connection, session_id))
        lost = event_store.missing_count(connection, session_id, last_seq, table=chat_events)
        missing = event_store.missing_seqs(connection, session_id, last_seq, table=chat_events) if lost else []
        owed = owed_surveys(connection, session)
    needed = study().chat.min_exchanges
    if done < needed:
        return jsonify(error=f"please have at least {needed} exchanges first ({done} so far)"), 409
    if not study().chat.rating_before_finish:
        owed = [(survey, occasion) for survey, occasion in owed if occasion < done]
    if owed:
        due = [{"survey": survey.name, "occasion": occasion} for survey, occasion in owed]
        return jsonify(error="please submit the rating first", owed=due), 409
    if lost and body.get("pending") != 0:
        return jsonify(error="some events have not reached the server yet", missing=missing), 409
    now = time.time()
    document = storable_text(body.get("document", ""))
    with writing(engine()) as connection:
        chat_store.update_chat(connection, session_id, chat_finished_at=now, document=document)
    session = stages.advance(
        session_id, "chat", writing_finished_at=now, final_text=document,
        missing_events=lost,
    )  # fmt: skip
    return jsonify(next=stage_url(session))
