"""The judges' pages, served by `study serve` beside the writers' (mounted in study.server).

GET /judge is the judging HIT's ExternalQuestion address. Its cases, in order: an MTurk
preview (the rubric, no texts); an MTurk judge (worker, assignment and HIT from the URL; a
reload finds the same task); a lab judge with an access code (the study's access-code list
applies, as for writers); anything else is told how to enter. A judge is sent to their task's
page, /judge/<task_id>; the task id is random, and the page shows texts and the rubric only.
study/static/judging.js stores each choice at once (POST /api/judging/<task_id>/ratings), so a
reload loses nothing, and submits when every text is rated; the completion page then posts
the verification code to MTurk, as the writers' does.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, g, jsonify, redirect, render_template, request, url_for

from study.judging import settings as judging_settings
from study.judging import tasks
from study.mturk import settings as mturk_settings
from study.mturk.entry import PREVIEW_ASSIGNMENT
from study.server import contract, entry_pages, page_security
from study.server.context import engine, limits, study
from study.store import reading, writing

blueprint = Blueprint("judging", __name__)


@blueprint.after_request
def page_policy(response):
    # The writers' policy (study.server.page_security): our scripts only, forms to us and MTurk.
    response.headers["Content-Security-Policy"] = page_security.content_security_policy(g.get("submit_origin"))
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    # As the writers' pages (study.server.participant.page_policy): the back button would show a
    # submitted task's texts from the cache as if they could still be rated.
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def settings() -> judging_settings.JudgingSettings:
    # Read once per app: the study a server runs does not change under it.
    found = current_app.extensions.get("study.judging")
    if found is None:
        found = current_app.extensions["study.judging"] = judging_settings.from_study(study())
    return found


def hold_seconds() -> float:
    # A task is held as long as MTurk lets the judge keep the assignment.
    return mturk_settings.from_study(study()).assignment_seconds


def message(text: str, status: int = 200):
    return render_template("judging/message.html", study=study(), message=text), status


@blueprint.get("/judge")
@contract.declare(
    "Enter a judging round: from MTurk (assignmentId, hitId, workerId, turkSubmitTo) or with an access code",
    query="api/pages.schema.json#/$defs/judgeQuery", responses={200: None, 302: None, 400: None, 409: None, 429: None},
)  # fmt: skip
def entry():
    args = request.args
    assignment_id = args.get("assignmentId", "").strip()
    if assignment_id == PREVIEW_ASSIGNMENT:
        return render_template("judging/preview.html", study=study(), settings=settings())
    claim = {}
    if assignment_id:
        worker_id, hit_id = args.get("workerId", "").strip(), args.get("hitId", "").strip()
        if not worker_id or not hit_id:
            return message("The link is missing workerId or hitId; open the task from MTurk.", 400)
        submit_to = args.get("turkSubmitTo", "").strip() or None
        if submit_to is not None:
            try:
                submit_to = page_security.submit_origin(submit_to, loopback_allowed=entry_pages.loopback_request())
            except page_security.NotMTurk as error:
                return message(f"{error}; open the task from MTurk.", 400)
        claim = {"judge": worker_id, "assignment_id": assignment_id, "hit_id": hit_id, "turk_submit_to": submit_to}
    elif args.get("access_code", "").strip():
        code = args["access_code"].strip()
        listed = limits().access_codes
        if len(code) > 64 or (listed is not None and code not in listed):
            return message("This access code is not one of this study's; check the code you were given.", 400)
        claim = {"judge": code}
    else:
        return message("Open this page from MTurk, or add your access code: /judge?access_code=YOUR-CODE", 400)

    def work(connection):
        # A new task counts as a new session does against the address's hour (study.server.
        # entry_pages.start_allowed), in the same count.
        try:
            return tasks.claim(connection, hold_seconds=hold_seconds(), **claim,
                               may_claim=lambda: entry_pages.start_allowed(connection))  # fmt: skip
        except tasks.TaskError as error:
            return message(f"{error}.", 409)
        except tasks.TooManyClaims:
            return message("Too many judging tasks were started from your network in the last hour; "
                           "please try again later.", 429)  # fmt: skip

    task = entry_pages.entering(work)
    if not isinstance(task, dict | None):
        return task  # a refusal
    if task is None:
        return message(nothing_left(claim.get("assignment_id")))
    return redirect(url_for("judging.task_page", task_id=task["task_id"]))


def nothing_left(assignment_id: str | None) -> str:
    """Why a judge got no task: the round is not built yet, or is done, or what is left is held by
    other judges (and comes back if they walk away) or holds texts this judge rated or wrote."""
    with reading(engine()) as connection:
        made, waiting = tasks.unsubmitted(connection)
    if not made:
        # A judge who came before `study judging build`: "every text has its ratings" would
        # send them away for good from a round that has not begun.
        said = "The judging round has not begun yet, so there is nothing to rate."
        return said + (" Please return this HIT; thank you for your interest." if assignment_id
                       else " Please come back when the researchers tell you it has begun.")  # fmt: skip
    if waiting:
        said = ("No text is left for you to rate right now: the texts still waiting are being rated by "
                "other judges, or are texts you have rated already or wrote yourself.")
    else:
        said = "Every text has all the ratings it needs, so there is nothing left to rate."
    # Only MTurk has a HIT to return; a lab judge with an access code has none.
    return said + (" Please return this HIT; thank you for your interest." if assignment_id else " Thank you!")


def task_or_404(connection, task_id: str) -> dict:
    task = tasks.get(connection, task_id)
    if task is None or task["claimed_at"] is None:
        abort(404, "unknown task")
    return task


@blueprint.get("/judge/<task_id>")
@contract.declare("A judging task's texts to rate", responses={200: None, 302: None, 404: None})
def task_page(task_id):
    with reading(engine()) as connection:
        task = task_or_404(connection, task_id)
        if task["submitted_at"] is not None:
            return redirect(url_for("judging.complete", task_id=task_id))
        items = tasks.items_of(connection, task_id)
    return render_template(
        "judging/task.html", study=study(), settings=settings(), items=items,
        rate_url=url_for("judging.rate", task_id=task_id),
    )  # fmt: skip


@blueprint.post("/api/judging/<task_id>/ratings")
@contract.declare(
    "Rate texts of a judging task, and submit it once every text is rated",
    body="api/judging-ratings.schema.json",
    responses={200: "api/judging-ratings.schema.json#/$defs/answer", 400: contract.ERROR,
               404: contract.ERROR, 409: contract.ERROR},
)  # fmt: skip
def rate(task_id):
    body = contract.body()
    with writing(engine()) as connection:
        task = tasks.get(connection, task_id)
        if task is None or task["claimed_at"] is None:
            return jsonify(error="unknown task"), 404
        try:
            rated = tasks.rate(connection, task, body.get("ratings", []), settings().scores)
            total = len(tasks.items_of(connection, task_id))
            done = False
            if body.get("submit"):
                tasks.submit(connection, task)
                done = True
        except tasks.TaskNotReady as error:
            return jsonify(error=str(error)), 409
        except tasks.TaskError as error:
            return jsonify(error=str(error)), 400
    return jsonify(rated=rated, total=total, next=url_for("judging.complete", task_id=task_id) if done else None)


@blueprint.get("/judge/<task_id>/complete")
@contract.declare("A judging task's completion page (MTurk's submit button)", responses={200: None, 302: None, 404: None})
def complete(task_id):
    with reading(engine()) as connection:
        task = task_or_404(connection, task_id)
    if task["submitted_at"] is None:
        return redirect(url_for("judging.task_page", task_id=task_id))
    submit_origin = None
    if task["assignment_id"] and task["turk_submit_to"]:
        try:
            submit_origin = page_security.submit_origin(task["turk_submit_to"], loopback_allowed=entry_pages.loopback_request())
        except page_security.NotMTurk:
            submit_origin = None
    g.submit_origin = submit_origin
    response = render_template(
        "judging/complete.html", study=study(), task=task, mturk=submit_origin is not None,
        submit_url=(submit_origin or "") + "/mturk/externalSubmit",
    )  # fmt: skip
    return response, 200, {"Cache-Control": "no-store"}
