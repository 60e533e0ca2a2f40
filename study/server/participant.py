"""The participant's path: entry, consent, instructions, prompt, (writing: the editor page,
study.server.writing_stage), self-evaluation, survey and completion.

Every page lives under /s/<session_id>/<stage>. A session is always at exactly one stage
(study.store.sessions.STAGES); asking for any other stage's page redirects to the current one,
so reloading, the back button or an old link can neither skip a step nor redo a finished one.
The session id travels in the URL rather than a cookie because MTurk shows the task in an
iframe, where browsers block third-party cookies.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

from flask import Blueprint, current_app, g, redirect, render_template, request
from markupsafe import Markup
from sqlalchemy import select

from study import control_arm, paradigms
from study.config import min_writing_text, study_duration
from study import providers
from study.review import rounds
from study.server import assignment, contract, page_security, stages, surveys, within
from study.server.context import engine, limits, study
from study.server.stages import at_stage, stage_url
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.mturk import mturk_assignments
from study.survey.evaluation import evaluation_items

blueprint = Blueprint("participant", __name__)

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
# The completion page shows the verification code, the assignment and the access code for this
# long after the survey (time to submit the HIT, or to note the code, and to reload the page);
# after that, or once MTurk has the submission, it says only that the session is finished.
COMPLETE_PAGE_SECONDS = 3600


@blueprint.after_request
def page_policy(response):
    # Participant pages: scripts only from our static files, forms only to us and MTurk, framed
    # only by MTurk (study.server.page_security).
    response.headers["Content-Security-Policy"] = page_security.content_security_policy(
        g.get("submit_origin")
    )
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def _loopback_request() -> bool:
    """The request came over loopback to a loopback host (a test, never a worker)."""
    return page_security.is_loopback(request.remote_addr) and page_security.is_loopback(
        urlsplit("//" + request.host).hostname
    )


def _page_text(template_source: str, session: dict) -> Markup:
    """Render a researcher-editable page text (consent, instructions) from study.toml."""
    template = current_app.jinja_env.from_string(template_source)
    hooks = paradigms.path_hooks(study())
    return Markup(
        template.render(
            study=study(),
            noun=stages.noun(session),
            # One source of truth with the dataset card: [study] duration_minutes.
            minutes=study().duration_minutes,
            # The operator's notice of a study on a paradigm's own path (a chat study's).
            notice=hooks.notice(study()) if hooks is not None else "",
            duration=study_duration(study()),
            # The timer's minimum ([session] min_seconds), which the instructions promise.
            min_writing=min_writing_text(study()),
            pay=study().pay,
        )
    )


# -- entry ------------------------------------------------------------------------------------


@blueprint.get("/")
@contract.declare("The study's front page (a lab participant types an access code)", responses={200: None})
def index():
    return render_template("index.html", study=study())


@blueprint.get("/task")
@contract.declare(
    "Enter the study: from MTurk (assignmentId, hitId, workerId, turkSubmitTo), from Prolific (PROLIFIC_PID, STUDY_ID, SESSION_ID) or with an access code",
    query="api/pages.schema.json#/$defs/taskQuery", responses={200: None, 302: None, 400: None, 403: None, 429: None},
)  # fmt: skip
def task():
    """The entry point. Cases, in order: MTurk preview, a provider with a participant path of
    its own (Prolific's parameters: study.providers.participant_paths), MTurk worker (new,
    returning, or new but already taken part in a once-per-worker study; this path was built
    for MTurk's HIT, so it asks MTurk's adapter by name), lab participant with an access code
    (new, returning, or starting another session). A new session joins the round the link
    names with `?round=NAME` (study.review.rounds), if that round admits the writer."""
    args = request.args
    round_name = args.get("round", "").strip() or None
    assignment_id = args.get("assignmentId", "").strip()
    if assignment_id == PREVIEW_ASSIGNMENT:
        return render_template("preview.html", study=study())
    for path in providers.participant_paths():  # e.g. Prolific's PROLIFIC_PID, STUDY_ID, SESSION_ID
        if path.arrives(args):
            return path.enter(args, round_name)

    if assignment_id:
        worker_id = args.get("workerId", "").strip()
        hit_id = args.get("hitId", "").strip()
        if not worker_id or not hit_id:
            return _entry_error("the link is missing workerId or hitId; open the task from MTurk")
        submit_to = args.get("turkSubmitTo", "").strip() or None
        if submit_to is not None:
            try:
                submit_to = page_security.submit_origin(
                    submit_to, loopback_allowed=_loopback_request()
                )
            except page_security.NotMTurk as error:
                return _entry_error(f"{error}; open the task from MTurk")
        with writing(engine()) as connection:
            session = session_store.by_assignment(connection, assignment_id)
            if session is None:
                # [mturk] once_per_worker: the exclusion qualification can reach a worker too
                # late to stop a second accept, so the worker id is checked here too.
                mturk = providers.provider_for("mturk")  # this branch is MTurk's HIT
                if mturk.repeat_session(connection, study(), worker_id, assignment_id) is not None:
                    return _refuse_repeat()
                refusal = rounds.entry_refusal(connection, study(), round_name, worker_id=worker_id)
                if refusal:
                    return _refuse_round(refusal)
                if not _start_allowed(connection):
                    return _too_many_starts()
                session = session_store.create(
                    connection,
                    worker_id=worker_id,
                    assignment_id=assignment_id,
                    hit_id=hit_id,
                    turk_submit_to=submit_to,
                )
                rounds.record(connection, study(), session["session_id"], round_name)
            elif session["worker_id"] != worker_id:
                return _entry_error("this assignment belongs to another worker")
        return redirect(stage_url(session))

    access_code = args.get("access_code", "").strip()
    if access_code:
        if len(access_code) > 64:
            return _entry_error("the access code is too long")
        listed = limits().access_codes
        if listed is not None and access_code not in listed:
            # [session] access_codes_file: only the codes the researchers handed out.
            return _entry_error("this access code is not one of this study's; check the code you were given")
        with writing(engine()) as connection:
            session = session_store.latest_for_access_code(connection, access_code)
            another = args.get("another") == "1"
            if session is None or (another and session["stage"] == "complete"):
                refusal = rounds.entry_refusal(
                    connection, study(), round_name, access_code=access_code
                )
                if refusal:
                    return _refuse_round(refusal)
                if not _start_allowed(connection):
                    return _too_many_starts()
                session = session_store.create(connection, access_code=access_code)
                rounds.record(connection, study(), session["session_id"], round_name)
        return redirect(stage_url(session))

    return _entry_error(
        "open this page from MTurk, or add your access code: /task?access_code=YOUR-CODE"
    )


def _start_allowed(connection) -> bool:
    """Whether this address may start another session; counted inside the caller's transaction
    (`connection`) when the count is kept in the study database."""
    # Loopback is not throttled: it is a reverse proxy on this machine (which would otherwise
    # put every writer under one address), a test or a benchmark (README, "Participants").
    if page_security.is_loopback(request.remote_addr):
        return True
    return current_app.extensions["study.start_throttle"].allow(request.remote_addr, connection)


def _too_many_starts():
    message = "Too many sessions were started from your network in the last hour; please try again later."
    return render_template("message.html", study=study(), title="Please wait", message=message), 429


def _refuse_repeat():
    message = providers.provider_for("mturk").repeat_refusal
    return render_template("message.html", study=study(), title="Already taken part", message=message), 403


def _refuse_round(message: str):
    return render_template("message.html", study=study(), title="Not this round", message=message), 403


def _entry_error(message: str):
    return render_template("message.html", study=study(), title="Cannot start", message=message), 400


# -- consent and instructions -----------------------------------------------------------------


@blueprint.route("/s/<session_id>/consent", methods=["GET", "POST"])
@contract.declare("The consent page", form="api/pages.schema.json#/$defs/consentForm", responses={200: None, 302: None})
@at_stage("consent")
def consent(session_id, session):
    error = None
    if request.method == "POST":
        if request.form.get("consent") == "yes":
            return redirect(stage_url(stages.advance(session_id, "consent")))
        error = "Please tick the box to agree before continuing."
    return render_template(
        "consent.html",
        study=study(),
        session=session,
        text=_page_text(study().consent_template, session),
        error=error,
    )


@blueprint.route("/s/<session_id>/instructions", methods=["GET", "POST"])
@contract.declare("The instructions", form="api/pages.schema.json#/$defs/instructionsForm", responses={200: None, 302: None})
@at_stage("instructions")
def instructions(session_id, session):
    """The instructions, with the boxes of [texts] instructions_confirmations, each required
    (CollabLLM's landing page: public sharing of the text, "I have read these notes")."""
    confirmations = study().instructions_confirmations
    error = None
    if request.method == "POST":
        if all(request.form.get(f"confirm{n}") == "yes" for n in range(1, len(confirmations) + 1)):
            return redirect(stage_url(stages.advance(session_id, "instructions")))
        error = "Please tick every box to continue."
    with reading(engine()) as connection:
        # Each round may have its own instructions (CoAuthor App. E: the qualification round's
        # first paragraph differs).
        template_source = rounds.instructions(connection, study(), session_id)
    return render_template(
        "instructions.html",
        study=study(),
        session=session,
        text=_page_text(template_source, session),
        confirmations=confirmations,
        error=error,
    )


@blueprint.route("/s/<session_id>/presurvey", methods=["GET", "POST"])
@contract.declare("A page of a survey before writing", form="api/pages.schema.json#/$defs/surveyForm", responses={200: None, 302: None})
@at_stage("presurvey")
def presurvey(session_id, session):
    """Surveys placed before writing (study.survey); with none it passes straight on."""
    return surveys.stage_page(session, "presurvey", lambda _: stage_url(stages.advance(session_id, "presurvey")))


# -- prompt -----------------------------------------------------------------------------------


@blueprint.route("/s/<session_id>/prompt", methods=["GET", "POST"])
@contract.declare("Choose a prompt", form="api/pages.schema.json#/$defs/promptForm", responses={200: None, 302: None})
@at_stage("prompt")
def prompt(session_id, session):

    with writing(engine()) as connection:
        available = assignment.available_prompts(connection, study(), session)
        if not available:
            return render_template(
                "message.html",
                study=study(),
                title="Thank you",
                message="You have written on every prompt as often as this study allows.",
            )
        chosen = None
        if study().prompt_selection == "assign":
            chosen = assignment.assign_prompt(connection, study(), session)
        elif request.method == "POST":
            code = request.form.get("prompt", "")
            chosen = next((p for p in available if p.code == code), None)
        if chosen is not None and study().assignment == "within":
            condition = within.next_condition(connection, study(), chosen, session)
            if condition is None:
                return render_template("message.html", study=study(), title="Thank you",
                                       message="You have written in every part of this study.")  # fmt: skip
        elif chosen is not None:
            condition = assignment.choose_condition(connection, study(), chosen)
        if chosen is not None:
            session_store.update_session(
                connection,
                session_id,
                prompt_code=chosen.code,
                condition=condition.name,
                stage="writing",
                writing_started_at=time.time(),
            )
    if chosen is not None:
        with reading(engine()) as connection:
            return redirect(stage_url(session_store.get(connection, session_id)))
    return render_template("prompt.html", study=study(), session=session, prompts=available)


# -- self-evaluation, survey, completion ------------------------------------------------------


@blueprint.route("/s/<session_id>/evaluation", methods=["GET", "POST"])
@contract.declare("The self-evaluation", form="api/pages.schema.json#/$defs/evaluationForm", responses={200: None, 302: None})
@at_stage("evaluation")
def evaluation(session_id, session):
    condition = study().condition(session["condition"])
    items = evaluation_items(stages.noun(session), assistant=not control_arm.is_control(condition))
    error = None
    if request.method == "POST":
        answers = {key: request.form.get(key) == "yes" for key, _ in items}
        if all(answers.values()):
            return redirect(stage_url(stages.advance(session_id, "evaluation", self_evaluation=answers)))
        error = ("Both requirements must be met." if len(items) > 1 else "The requirement must be met.")
        error += " If they are not yet, please say so to the researchers."
    return render_template(
        "evaluation.html", study=study(), session=session, items=items, error=error
    )


@blueprint.route("/s/<session_id>/survey", methods=["GET", "POST"])
@contract.declare("A page of a survey after writing", form="api/pages.schema.json#/$defs/surveyForm", responses={200: None, 302: None})
@at_stage("survey")
def survey(session_id, session):
    """The after-session and end-of-study surveys (study.server.surveys), then the code."""

    def finish(answers: dict) -> str:
        return stage_url(
            stages.advance(
                session_id,
                "survey",
                survey=answers,
                completed_at=time.time(),
                verification_code=session_store.new_verification_code(),
            )
        )

    return surveys.stage_page(session, "survey", finish)


@blueprint.get("/s/<session_id>/complete")
@contract.declare("The completion page (the verification code, MTurk's submit button)", responses={200: None, 302: None})
@at_stage("complete")
def complete(session_id, session):
    if _completion_closed(session):
        # Whoever holds only the session id (a link, a log) learns nothing more from it.
        return render_template(
            "message.html",
            study=study(),
            title="Thank you",
            message="This session is finished. Its verification code was shown when it ended.",
        )
    if (elsewhere := stages.completion_url(session)) is not None:
        return redirect(elsewhere)  # e.g. Prolific's completion URL with the study's code
    submit_origin = None
    if session["assignment_id"] and session["turk_submit_to"]:
        try:
            submit_origin = page_security.submit_origin(
                session["turk_submit_to"], loopback_allowed=_loopback_request()
            )
        except page_security.NotMTurk:
            submit_origin = None  # stored before turkSubmitTo was checked: never a form action
    g.submit_origin = submit_origin
    parts_left = 0
    if study().assignment == "within":  # the next arm's session (study.server.within)
        with reading(engine()) as connection:
            parts_left = within.remaining(connection, study(), session)
    response = current_app.make_response(
        render_template(
            "complete.html",
            study=study(),
            session=session,
            mturk=submit_origin is not None,
            submit_url=(submit_origin or "") + "/mturk/externalSubmit",
            survey=json.loads(session["survey"] or "{}"),
            parts_left=parts_left,
        )
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _completion_closed(session: dict) -> bool:
    if time.time() - (session["completed_at"] or 0) > COMPLETE_PAGE_SECONDS:
        return True
    if not session["assignment_id"]:
        return False
    with reading(engine()) as connection:
        submitted = connection.execute(
            select(mturk_assignments.c.status).where(
                mturk_assignments.c.assignment_id == session["assignment_id"],
                mturk_assignments.c.status.in_(("Submitted", "Approved", "Rejected")),
            )
        ).first()
    return submitted is not None
