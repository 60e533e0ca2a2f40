"""A reviewer's path: the home page with progress, the next submission, rating it.

The submission page answers, in order: unknown pseudonym (404); a researcher not assigned to it
(to the adjudication view); a reviewer not assigned to it (403); otherwise the rating view,
with others' ratings only once this reviewer has rated (study.review.ratings.visible_to); a
submission whose writer withdrew is refused (403) to everyone, as is rating it.
Rating works as a plain form, and study/static/review-rating.js adds the keyboard: 1-5 rate at
once (a JSON POST), n saves and asks for the next submission. Every save carries the version of
the rating the page showed: one from a stale page (the same reviewer's other tab changed it) is
refused 409 with what is stored now (study.review.ratings.StaleRating), and the page without
JavaScript comes back with that message and the reviewer's unsaved comment. The rating that is
stored, sent again (a score double-clicked without JavaScript), is no conflict: it is shown saved.
"""

from __future__ import annotations

from flask import abort, g, jsonify, redirect, render_template, request, url_for

from study.review import decisions, presentation, queue, rules, submissions
from study.review import ratings as rating_store
from study.review import settings as review_settings
from study.review.web.base import blueprint
from study.review.web.auth import login_required, refuse, wants_json
from study.server import contract
from study.server.context import engine, study
from study.store import reading, writing


def settings():
    return review_settings.from_study(study())


def _progress(connection) -> queue.Progress:
    return queue.progress(
        connection,
        g.login.reviewer,
        needed=settings().ratings_per_submission,
        assignment_hours=settings().assignment_hours,
    )


@blueprint.get("/")
@contract.declare("A reviewer's home: progress and own ratings", query="api/review.schema.json#/$defs/homeQuery", responses={200: None, 302: None})
@login_required
def home():
    with writing(engine()) as connection:
        submissions.collect(connection, study())
        progress = _progress(connection)
        gone = submissions.withdrawn(connection)
        mine = [
            {**rating, "when": rating["updated_at"]}
            for rating in rating_store.all_ratings(connection)
            if rating["reviewer_id"] == g.login.reviewer["reviewer_id"]
            and rating["submission_id"] not in gone
        ]
        # A researcher with nothing to rate is pointed to what waits for them instead.
        to_adjudicate = (
            _awaiting_adjudication(connection)
            if g.login.researcher and progress.nothing_to_rate
            else 0
        )
    return render_template(
        "review/home.html",
        study=study(),
        progress=progress,
        rated=sorted(mine, key=lambda r: -r["when"]),
        to_adjudicate=to_adjudicate,
    )


def _awaiting_adjudication(connection) -> int:
    judged = decisions.judge(connection, study(), submissions.in_review(connection))
    return sum(j.outcome.status == rules.DISAGREEMENT for j in judged)


@blueprint.post("/next")
@contract.declare(
    "The reviewer's next submission", form="api/review.schema.json#/$defs/tokenForm",
    responses={200: "api/responses.schema.json#/$defs/nextSubmission", 302: None, 403: None},
)  # fmt: skip
@login_required
def next_submission():
    """Assign (or find) the reviewer's next submission; a JSON caller gets its address."""
    with writing(engine()) as connection:
        submissions.collect(connection, study())
        chosen = queue.next_for(
            connection,
            g.login.reviewer,
            needed=settings().ratings_per_submission,
            assignment_hours=settings().assignment_hours,
        )
    target = (
        url_for("review.submission", submission_id=chosen)
        if chosen
        else url_for("review.home", done=1)
    )
    if wants_json():
        return jsonify(next=target, done=chosen is None)
    return redirect(target)


def _submission_or_404(connection, submission_id: str) -> dict:
    found = submissions.get(connection, submission_id)
    if found is None:
        abort(404)
    return found


# A reviewer (or researcher) who had the submission open, or assigned, when its writer withdrew.
WITHDRAWN = ("This submission is no longer reviewed: its writer withdrew from the study. Your "
             "earlier rating of it, if any, stays in the audit log and counts nowhere.")


def withdrawn(connection, submission_id: str) -> bool:
    return submission_id in submissions.withdrawn(connection)


@blueprint.get("/s/<submission_id>")
@contract.declare("A submission to rate, with its replay", responses={200: None, 302: None, 403: None})
@login_required
def submission(submission_id):
    return _submission_page(submission_id)


def _submission_page(submission_id: str, *, stale: rating_store.StaleRating | None = None, comment=None):
    """The rating view; after a save refused as stale, with its message and the reviewer's
    unsaved comment in the box, at the stored version (rating again then replaces it)."""
    reviewer_id = g.login.reviewer["reviewer_id"]
    with reading(engine()) as connection:
        found = _submission_or_404(connection, submission_id)
        if withdrawn(connection, submission_id):
            return refuse(403, WITHDRAWN)
        mine = rating_store.own(connection, submission_id, reviewer_id)
        assigned = mine is not None or queue.is_assigned(connection, submission_id, reviewer_id)
        if not assigned:
            if g.login.researcher:
                return redirect(url_for("review.adjudication", submission_id=submission_id))
            return refuse(403, "This submission is not in your queue.")
        shown = presentation.show(connection, study(), found)
        others = rating_store.visible_to(connection, submission_id, reviewer_id)
        decided = decisions.adjudication(connection, submission_id)
        progress = _progress(connection)
    page = render_template(
        "review/submission.html",
        study=study(),
        shown=shown,
        rubric=settings().rubric,
        mine=mine,
        version=mine["version"] if mine else 0,
        comment=(mine["comment"] if mine else "") if comment is None else comment,
        stale=str(stale) if stale else "",
        others=others,
        decided=decided is not None,
        progress=progress,
        boot={
            "rateUrl": url_for("review.rate", submission_id=submission_id),
            "nextUrl": url_for("review.next_submission"),
            "scores": list(settings().scores),
            "rated": mine["score"] if mine else None,
            "closed": decided is not None,
        },
    )
    return (page, 409) if stale else page


@blueprint.post("/s/<submission_id>/rating")
@contract.declare(
    "Rate a submission", form="api/review.schema.json#/$defs/ratingForm",
    responses={
        200: "api/responses.schema.json#/$defs/rated", 302: None, 400: None, 403: None,
        409: "api/responses.schema.json#/$defs/ratingRefused",
    },
)  # fmt: skip
@login_required
def rate(submission_id):
    reviewer = g.login.reviewer
    raw = request.form.get("score", "")
    # The version of the rating the page showed (0: none); a client that sends none (a script)
    # is not checked. Digits only, as the score ("²" is a digit int() refuses).
    sent = request.form.get("version")
    if sent is not None and not (sent.isascii() and sent.isdecimal()):
        return refuse(400, f"version must be the number the page was given, got {sent!r}: reload the page.")
    with writing(engine()) as connection:
        _submission_or_404(connection, submission_id)
        if withdrawn(connection, submission_id):
            return refuse(403, WITHDRAWN)
        if rating_store.own(
            connection, submission_id, reviewer["reviewer_id"]
        ) is None and not queue.is_assigned(connection, submission_id, reviewer["reviewer_id"]):
            return refuse(403, "This submission is not in your queue.")
        if decisions.adjudication(connection, submission_id) is not None:
            return refuse(409, "A researcher has already decided this submission.")
        if rating_store.own(connection, submission_id, reviewer["reviewer_id"]) is None and not (
            queue.waits_for(
                connection, submission_id, reviewer["reviewer_id"],
                needed=settings().ratings_per_submission, assignment_hours=settings().assignment_hours,
            )  # fmt: skip
        ):
            return refuse(
                409,
                "Your assignment of this submission expired and other reviewers have since given "
                "it all the ratings it needs, so your rating was not saved. Ask for the next one.",
            )
        try:
            stored = rating_store.rate(
                connection,
                submission_id,
                reviewer,
                # "²" is a digit int() refuses; one "-" only ("--4" is no number either).
                int(raw) if raw.strip().removeprefix("-").isdecimal() else -1,
                request.form.get("comment", ""),
                scores=settings().scores,
                seen=None if sent is None else int(sent),
            )
        except rating_store.StaleRating as error:
            stale = error
        except rating_store.RatingError as error:
            return refuse(400, str(error))
        else:
            stale = None
            others = rating_store.visible_to(connection, submission_id, reviewer["reviewer_id"])
            progress = _progress(connection)
    if stale is not None:
        # Nothing was stored; the reviewer is shown what is, and keeps what they wrote.
        if wants_json():
            current = stale.current
            return jsonify(error=str(stale), stale=True, current=current and {
                "score": current["score"], "comment": current["comment"],
                "version": current["version"], "updated_at": current["updated_at"],
            }), 409  # fmt: skip
        return _submission_page(submission_id, stale=stale, comment=request.form.get("comment", ""))
    if wants_json():
        return jsonify(
            score=stored["score"],
            comment=stored["comment"],
            version=stored["version"],
            others=[
                {"reviewer": o["reviewer"], "score": o["score"], "comment": o["comment"]}
                for o in others
            ],
            progress={"rated": progress.rated, "total": progress.total},
        )
    return redirect(url_for("review.submission", submission_id=submission_id))
