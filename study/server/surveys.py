"""Survey pages of the participant's path, and the in-session survey API.

`stage_page` runs the surveys of one stage ("presurvey" or "survey", study.survey.placement):
one page of one survey at a time, each page saved when answered (study.store.surveys), so a
reload or a restarted server shows the next unanswered page. When nothing is left it calls
`finish(answers)` with the session's answers and redirects where that leads.

POST /api/sessions/<id>/surveys/<name>/<occasion>  {"answers": {...}}
  -> 200 {"saved": true} | 422 {"error", "errors": {item: message}}
answers an in-session survey (a chat study's periodic rating); only a survey the session owes
at that occasion is accepted, and answering it again changes nothing. A session that has left
the chat takes no new rating (409), as the editor takes no new events once writing ended.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, jsonify, redirect, render_template, request

from study import paradigms
from study.server import contract, stages, within
from study.server.context import engine, session_or_404, study
from study.store import reading, writing
from study.store import surveys as survey_store
from study.survey import placement
from study.survey.answers import check_page, visible
from study.survey.questions import Survey

blueprint = Blueprint("surveys", __name__)


def noun_for(session: dict) -> str:
    """What {noun} in a question becomes: story/essay, or what the study's own path says (a
    chat study's document type)."""
    hooks = paradigms.path_hooks(study())
    if hooks is not None:
        with reading(engine()) as connection:
            return hooks.noun(connection, study(), session)
    return stages.noun(session)


def owed_surveys(connection, session: dict) -> list:
    """In-session surveys this session owes now: [(survey, occasion)], oldest first."""
    hooks = paradigms.path_hooks(study())
    exchanges = hooks.exchanges(connection, session["session_id"]) if hooks is not None else 0
    answered = {
        (row["survey"], row["occasion"])
        for row in survey_store.for_session(connection, session["session_id"])
        if row["placement"] == "in_session"
    }
    return placement.in_session_due(study().surveys, study().paradigm, session["condition"], exchanges, answered)


def stage_page(session: dict, stage: str, finish: Callable[[dict], str]):
    session_id = session["session_id"]
    pending, row = _pending(session, stage)
    errors: dict[str, str] = {}
    answers: dict = {}
    if pending is not None and request.method == "POST":
        page, earlier = (row["page"], row["answers"]) if row else (1, {})
        sent_for = (request.form.get("_survey"), request.form.get("_page"))
        if sent_for != (None, None) and sent_for != (pending.name, str(page)):
            return redirect(request.path)  # a stale page (another tab, the back button): show the current one
        form = {key: request.form.getlist(key) for key in request.form if not key.startswith("_")}
        answers, errors = check_page(pending, page, _single(form, pending), earlier)
        if not errors:
            with writing(engine()) as connection:
                survey_store.save_page(
                    connection, session_id, pending.name, 0, pending.placement, answers,
                    page + 1, last=page >= pending.pages,
                )  # fmt: skip
            pending, row = _pending(session, stage)
            if pending is not None:
                return redirect(request.path)
    if pending is None:
        with reading(engine()) as connection:
            merged = _session_answers(connection, session_id)
        return redirect(finish(merged))
    page, earlier = (row["page"], row["answers"]) if row else (1, {})
    return render_template(
        "survey.html",
        study=study(),
        session=session,
        survey=pending,
        page=page,
        items=render_items(pending, page, {**earlier, **answers}, noun_for(session)),
        errors=errors,
        answers=answers,
    )


def _pending(session: dict, stage: str):
    """The first survey of `stage` not yet submitted, and its row (None, None when done)."""
    with reading(engine()) as connection:
        # Within subjects the study ends for the participant with every arm of every genre
        # written, as the completion page's "every part" says (within.every_arm_done): a study
        # of two genres offers the other genre's arms after the first's, so an end-of-study
        # question (which arm did you prefer?) asked at the end of one genre's sequence would
        # come before arms the participant is still to write in.
        owed = within.owed_arms(connection, study(), session) if study().assignment == "within" else None
        due = placement.stage_surveys(connection, study().surveys, study().paradigm, session, stage, owed)
        for survey in due:
            row = survey_store.get(connection, session["session_id"], survey.name)
            if not (row and row["submitted_at"]):
                return survey, row
    return None, None


def render_items(survey: Survey, page: int, answers: dict, noun: str) -> list[dict]:
    """The page's questions for survey.html: text with {noun} filled in, and whether each is
    hidden now (show_if; survey.js re-evaluates rules that read this same page)."""
    same_page = {item.id for item in survey.page_items(page)}
    shown = []
    for item in survey.page_items(page):
        hidden = item.show_if is not None and not visible(item, answers)
        if hidden and item.show_if.item not in same_page:
            continue  # decided by an earlier page: never shown on this one
        shown.append({"item": item, "text": item.text.replace("{noun}", noun), "hidden": hidden})
    return shown


def _single(form: dict[str, list[str]], survey: Survey) -> dict:
    multiple = {item.id for item in survey.items if item.type == "multiple"}
    return {key: values if key in multiple else (values[0] if values else "") for key, values in form.items()}


def _session_answers(connection, session_id: str) -> dict:
    """Every answer of the session's path surveys, by question id (sessions.survey)."""
    merged: dict = {}
    for row in survey_store.for_session(connection, session_id):
        if row["placement"] != "in_session":
            merged.update(row["answers"])
    return merged


@blueprint.post("/api/sessions/<session_id>/surveys/<name>/<int:occasion>")
@contract.declare(
    "Answer an in-session survey (the chat study's periodic rating)", body="api/survey-answers.schema.json",
    responses={200: "api/responses.schema.json#/$defs/saved", 409: contract.ERROR, 422: contract.ERROR},
)  # fmt: skip
def answer_in_session(session_id: str, name: str, occasion: int):
    session = session_or_404(session_id)
    survey = next((s for s in study().surveys if s.name == name and s.placement == "in_session"), None)
    if survey is None:
        return jsonify(error=f"no in-session survey named '{name}'"), 404
    body = contract.body()
    with writing(engine()) as connection:
        if survey_store.get(connection, session_id, name, occasion) is not None:
            return jsonify(saved=True, duplicate=True)
        if session["stage"] != placement.IN_SESSION_STAGE:
            return jsonify(error=f"session is at stage '{session['stage']}' and takes no new ratings"), 409
        if (survey, occasion) not in owed_surveys(connection, session):
            return jsonify(error=f"survey '{name}' is not due after exchange {occasion}"), 409
        answers, errors = check_page(survey, 1, body["answers"])
        for page in range(2, survey.pages + 1):
            more, more_errors = check_page(survey, page, body["answers"], answers)
            answers.update(more)
            errors.update(more_errors)
        if errors:
            first = next(iter(errors))
            return jsonify(error=f"answers.{first}: {errors[first]}", errors=errors), 422
        survey_store.save_page(
            connection, session_id, name, occasion, "in_session", answers, survey.pages + 1, last=True
        )
    return jsonify(saved=True)
