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

from flask import Blueprint, current_app, g, redirect, render_template, request
from markupsafe import Markup

from study import control_arm, paradigms
from study.config_texts import min_writing_text, study_duration
from study import providers
from study.review import rounds
from study.server import assignment, contract, entry_pages, page_security, stages, surveys, within
from study.server.context import engine, limits, study
from study.server.stages import at_stage, stage_url
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.coordination import clock
from study.survey.evaluation import evaluation_items

blueprint = Blueprint("participant", __name__)

# The completion page shows the verification code, the assignment and the access code for this
# long after the survey (time to submit the HIT, or to note the code, and to reload the page),
# and longer while the provider may still take the submission (_completion_closed); after that,
# or once the provider has the submission, it says only that the session is finished.
COMPLETE_PAGE_SECONDS = 3600
# Within subjects, what a participant who has written in every arm is told when they come back.
ALL_PARTS_DONE = "You have written in every part of this study."


@blueprint.after_request
def page_policy(response):
    # Participant pages: scripts only from our static files, forms only to us and MTurk, framed
    # only by MTurk (study.server.page_security).
    response.headers["Content-Security-Policy"] = page_security.content_security_policy(
        g.get("submit_origin")
    )
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    # The back button shows a cached page without asking the server: a finished session's
    # editor, which can no longer load its text. Asked again, every page redirects to the
    # session's current step (study.server.stages.at_stage).
    response.headers.setdefault("Cache-Control", "no-store")
    return response


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
    """The entry point. Cases, in order: a recruitment provider's participant (its parameters
    and its cases: study.mturk.entry, study.prolific.entry), lab participant with an access
    code (new, returning, or starting another session). A new session joins the round the link
    names with `?round=NAME` (study.review.rounds), if that round admits the writer."""
    args = request.args
    round_name = args.get("round", "").strip() or None
    # A recruitment provider's own parameters (MTurk's assignmentId, hitId, workerId and
    # turkSubmitTo, previews included; Prolific's PROLIFIC_PID, STUDY_ID and SESSION_ID),
    # in the registry's order (study.providers.participant_paths).
    for path in providers.participant_paths():
        if path.arrives(args):
            return path.enter(args, round_name)

    access_code = args.get("access_code", "").strip()
    if access_code:
        if len(access_code) > 64:
            return entry_pages.cannot_start("the access code is too long")
        listed = limits().access_codes
        if listed is not None and access_code not in listed:
            # [session] access_codes_file: only the codes the researchers handed out.
            return entry_pages.cannot_start("this access code is not one of this study's; check the code you were given")
        def work(connection):
            session = session_store.latest_for_access_code(connection, access_code)
            another = args.get("another") == "1"
            if another and session and session["stage"] == "complete" and _nothing_owed(connection, session):
                # Within subjects, a participant who has written in every arm (the link of an
                # earlier part's page, a bookmark) is told so here: a new session would stay
                # at the prompt stage for good, counted among the study's unfinished ones.
                return entry_pages.message("Thank you", ALL_PARTS_DONE, 200)
            # A finished session of another round than the link names (the main round's link
            # after the qualification round) starts a new one there, as `another` does.
            moving_on = session is not None and rounds.names_another_round(
                connection, study(), session, round_name
            )
            if session is None or ((another or moving_on) and session["stage"] == "complete"):
                refusal = rounds.entry_refusal(
                    connection, study(), round_name, access_code=access_code, returning=None
                )
                if refusal:
                    return entry_pages.refuse_round(refusal)
                if not entry_pages.start_allowed(connection):
                    return entry_pages.too_many_starts()
                session = session_store.create(connection, access_code=access_code)
                rounds.record(connection, study(), session["session_id"], round_name)
            return redirect(stage_url(session))

        return entry_pages.entering(work)

    return entry_pages.cannot_start(
        "open this page from MTurk, or add your access code: /task?access_code=YOUR-CODE"
    )


def _nothing_owed(connection, session: dict) -> bool:
    return study().assignment == "within" and within.every_arm_done(connection, study(), session)


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
@contract.declare("Choose a prompt", form="api/pages.schema.json#/$defs/promptForm", responses={200: None, 302: None, 403: None})
@at_stage("prompt")
def prompt(session_id, session):

    with writing(engine()) as connection:
        # Within subjects, a participant back after their last arm (the "another" link of an
        # older page, a bookmark) is told so at once, not after picking a prompt.
        if study().assignment == "within" and within.every_arm_done(connection, study(), session):
            return render_template("message.html", study=study(), title="Thank you", message=ALL_PARTS_DONE)
        # A genre whose every arm is closed (assign = false) has no condition for a new session;
        # within subjects a participant still owed one of its arms takes its prompts as before.
        genres = (within.open_genres(connection, study(), session) if study().assignment == "within"
                  else assignment.open_genres(study()))  # fmt: skip
        available = assignment.available_prompts(connection, study(), session, genres)
        if study().assignment == "within":
            available = within.unwritten_first(connection, study(), session, available)
        if not available and assignment.available_prompts(connection, study(), session):
            return render_template(
                "message.html",
                study=study(),
                title="Closed to new writers",
                message="This study is not taking new writers at the moment. Thank you for your "
                "interest; please close this page (on MTurk, return the HIT).",
            ), 403
        if not available:
            return render_template(
                "message.html",
                study=study(),
                title="Thank you",
                message="You have written on every prompt as often as this study allows.",
            )
        chosen = None
        if study().prompt_selection == "assign":
            chosen = assignment.assign_prompt(connection, study(), session, genres)
        elif request.method == "POST":
            code = request.form.get("prompt", "")
            chosen = next((p for p in available if p.code == code), None)
        sequence = {}  # within subjects: the participant's arm list and row, kept with the session
        if chosen is not None and study().assignment == "within":
            condition, stored = within.next_condition(connection, study(), chosen, session)
            if condition is None:
                return render_template("message.html", study=study(), title="Thank you", message=ALL_PARTS_DONE)
            sequence = {"within_order": stored} if stored else {}
        elif chosen is not None:
            condition = assignment.choose_condition(connection, study(), chosen)
        if chosen is not None:
            session_store.update_session(
                connection,
                session_id,
                **sequence,
                prompt_code=chosen.code,
                condition=condition.name,
                paradigm=condition.paradigm,
                stage="writing",
                # The database's clock, which the finish's check reads: hosts' own may disagree.
                writing_started_at=clock(connection),
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
@contract.declare("The completion page (the verification code; a provider's submit form or redirect)", responses={200: None, 302: None})
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
    # A provider's form on the page (MTurk's: the code posted back to the HIT), allowed as the
    # page's one form action elsewhere.
    paths = providers.participant_paths()
    g.submit_origin = next((o for path in paths if (o := path.submit_origin(session))), None)
    provider_form = next((f for path in paths if (f := path.completion_form(session))), None)
    parts_left, all_done = 0, False
    if study().assignment == "within":  # the next arm's session (study.server.within)
        with reading(engine()) as connection:
            parts_left = within.remaining(connection, study(), session)
            all_done = within.every_arm_done(connection, study(), session)
    response = current_app.make_response(
        render_template(
            "complete.html",
            study=study(),
            session=session,
            provider_form=provider_form,
            survey=json.loads(session["survey"] or "{}"),
            parts_left=parts_left,
            # Within subjects, once every arm is done there is no other session to write.
            all_done=all_done,
        )
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _completion_closed(session: dict) -> bool:
    paths = providers.participant_paths()
    # A worker who closed the tab before submitting comes back while the provider still takes
    # the submission (MTurk: the HIT stays in their dashboard until the assignment's time runs
    # out): the page stays open that long, or the finished work is abandoned and not paid.
    deadline = stages.submission_deadline(session) or 0
    if time.time() > max((session["completed_at"] or 0) + COMPLETE_PAGE_SECONDS, deadline):
        return True
    # Once the provider has the submission, the page says only that the session is done.
    return any(path.submitted(session) for path in paths)
