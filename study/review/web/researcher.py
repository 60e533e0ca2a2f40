"""The researcher's pages: outcomes and agreement, adjudication, the audit log.

Researchers see every rating with its reviewer and comment (they decide disagreements), but
still only pseudonyms: worker ids stay with `study qualify`, on the command line. A writer who
withdrew leaves every page here: their submissions, and the ratings given them, count nowhere.
"""

from __future__ import annotations

from collections import Counter

from flask import abort, g, redirect, render_template, request, url_for

from study.review import audit, decisions, presentation, report, rules, submissions
from study.review import ratings as rating_store
from study.review.web.base import blueprint
from study.review.web.auth import refuse, researcher_required
from study.review.web.rating import WITHDRAWN, settings, withdrawn
from study.server import contract
from study.server.context import engine, study
from study.store import reading, writing
from study.store.simulated import simulated_ids

AUDIT_PAGE = 500


@blueprint.get("/results")
@contract.declare("Outcomes and agreement (researchers)", query="api/review.schema.json#/$defs/resultsQuery", responses={200: None, 302: None, 403: None})
@researcher_required
def results():
    wanted = request.args.get("status", "")
    with writing(engine()) as connection:
        submissions.collect(connection, study())
        judged = decisions.judge(connection, study(), submissions.in_review(connection))
        all_ratings = rating_store.all_ratings(connection)
        simulated = simulated_ids(connection)
        # A withdrawn writer's submissions are not in `judged`, and their ratings leave the figures.
        rated = {j.submission_id for j in judged if not j.submission["disqualified"]}
        second_looks = len(rating_store.changed_after_seeing_others(connection, rated))
    triples = [
        (r["submission_id"], r["reviewer"], r["score"])
        for r in all_ratings
        if r["submission_id"] in rated
    ]
    stats = report.agreement(
        triples,
        level=settings().agreement_level,
        ratings_per_submission=settings().ratings_per_submission,
        scores=settings().scores,
    )
    counts = Counter(j.outcome.status for j in judged)
    return render_template(
        "review/results.html",
        study=study(),
        judged=[j for j in judged if not wanted or j.outcome.status == wanted],
        counts=[(status, counts.get(status, 0)) for status in rules.STATUSES],
        wanted=wanted,
        stats=stats,
        show=report.show,
        settings=settings(),
        simulated=simulated,
        second_looks=second_looks,
    )


@blueprint.get("/s/<submission_id>/adjudicate")
@contract.declare("A submission's ratings, to decide it (researchers)", responses={200: None, 302: None, 403: None})
@researcher_required
def adjudication(submission_id):
    return _adjudication_page(submission_id)


def _adjudication_page(submission_id: str, *, stale: str = "", note: str = ""):
    """The submission's ratings and decision; after a decision refused as stale, with its
    message and the researcher's unsaved note, at the decision stored now."""
    with reading(engine()) as connection:
        found = submissions.get(connection, submission_id)
        if found is None:
            abort(404)
        if withdrawn(connection, submission_id):
            return refuse(403, WITHDRAWN)
        shown = presentation.show(connection, study(), found)
        all_ratings = rating_store.of_submission(connection, submission_id)
        judged = decisions.judge(connection, study(), [found])[0]
        decided = decisions.adjudication(connection, submission_id)
        history = audit.entries(
            connection, submission_id=submission_id, actions=audit.REVIEW_ACTIONS
        )
    return render_template(
        "review/adjudicate.html",
        study=study(),
        shown=shown,
        rubric=settings().rubric,
        ratings=all_ratings,
        judged=judged,
        decided=decided,
        history=history,
        stale=stale,
        note=note,
        boot={"scores": list(settings().scores)},
    ), (409 if stale else 200)


@blueprint.post("/s/<submission_id>/decision")
@contract.declare(
    "Decide a submission (researchers)", form="api/review.schema.json#/$defs/decisionForm",
    responses={302: None, 400: None, 403: None, 409: None},
)  # fmt: skip
@researcher_required
def decide(submission_id):
    raw = request.form.get("score", "")
    # The decision the page showed (its time; empty: none), so that another researcher's
    # decision made meanwhile is not replaced unnoticed; a client that sends none is not checked.
    shown = request.form.get("decided_at")
    try:
        seen = False if shown is None else (float(shown) if shown else None)
    except ValueError:
        return refuse(400, f"decided_at must be the time the page was given, got {shown!r}: reload the page.")
    with writing(engine()) as connection:
        if submissions.get(connection, submission_id) is None:
            abort(404)
        if withdrawn(connection, submission_id):
            return refuse(403, WITHDRAWN)
        try:
            decisions.adjudicate(
                connection,
                submission_id,
                g.login.reviewer,
                int(raw) if raw.strip().isdecimal() else -1,  # "²" is a digit int() refuses
                request.form.get("note", ""),
                scores=settings().scores,
                seen=seen,
            )
        except decisions.StaleDecision as error:
            stale = str(error)
        except rating_store.RatingError as error:
            return refuse(400, str(error))
        else:
            stale = ""
    if stale:
        # Nothing was stored; the researcher reads the decision that is, and keeps their note.
        return _adjudication_page(submission_id, stale=stale, note=request.form.get("note", ""))
    return redirect(url_for("review.adjudication", submission_id=submission_id))


@blueprint.get("/audit")
@contract.declare("The audit log (researchers)", query="api/review.schema.json#/$defs/auditQuery", responses={200: None, 302: None, 403: None})
@researcher_required
def audit_log():
    submission_id = request.args.get("submission") or None
    everything = request.args.get("all") == "1"
    with reading(engine()) as connection:
        entries = audit.entries(
            connection,
            submission_id=submission_id,
            actions=None if everything else audit.REVIEW_ACTIONS,
            limit=AUDIT_PAGE,
        )
    return render_template(
        "review/audit.html",
        study=study(),
        entries=entries,
        submission_id=submission_id,
        everything=everything,
        limit=AUDIT_PAGE,
    )
