"""MTurk's participant path through the task server (study.providers.ParticipantPath): the
HIT's ExternalQuestion opens `/task?assignmentId=&hitId=&workerId=&turkSubmitTo=`, and the
completion page posts the verification code back to MTurk's externalSubmit.

Cases on entry, in order:
  1. preview (`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`, before the worker accepts) -> the
     preview page;
  2. a link without workerId or hitId, or a turkSubmitTo that is not MTurk's -> refused with
     the fix;
  3. returning worker: the session bound to the assignment resumes (another worker holding
     the assignment's link is refused), unless it is unfinished and the assignment's time has
     run out (entry plus [mturk] assignment_minutes): MTurk has abandoned the assignment and
     takes no submission for it, so the worker is told so rather than write on unpaid;
  4. new worker: refused when [mturk] once_per_worker and the worker already took part (the
     exclusion qualification can reach a worker too late to stop a second accept) or judged
     the study's texts (study.mturk.repeat: judges do not get that qualification), when the
     round refuses them (study.review.rounds), or when their address started too many
     sessions; else a new session bound to the assignment.
At the end, the completion page shows a form posting the verification code to turkSubmitTo's
externalSubmit until the assignment's time may have run out (at least an hour after the survey:
a worker who closed the tab comes back from the HIT in their dashboard); once MTurk has the
submission, the page says only that the session is done.
"""

from __future__ import annotations

import time

from flask import redirect, render_template
from markupsafe import Markup
from sqlalchemy import select

from study.mturk import repeat
from study.mturk import settings as mturk_settings
from study.review import rounds
from study.server import entry_pages, page_security
from study.server.context import engine, study
from study.server.stages import stage_url
from study.store import reading
from study.store import sessions as session_store
from study.store.mturk import mturk_assignments

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
SUBMITTED = ("Submitted", "Approved", "Rejected")
TIME_RAN_OUT = (
    "Your time for this HIT ran out ({minutes} minutes after you accepted it), so MTurk no longer "
    "takes a submission for it and it can no longer be completed or paid. Thank you for your time."
)


def arrives(args) -> bool:
    return bool(args.get("assignmentId", "").strip())


def enter(args, round_name: str | None):
    assignment_id = args.get("assignmentId", "").strip()
    if assignment_id == PREVIEW_ASSIGNMENT:
        return entry_pages.preview()
    worker_id = args.get("workerId", "").strip()
    hit_id = args.get("hitId", "").strip()
    if not worker_id or not hit_id:
        return entry_pages.cannot_start("the link is missing workerId or hitId; open the task from MTurk")
    submit_to = args.get("turkSubmitTo", "").strip() or None
    if submit_to is not None:
        try:
            submit_to = page_security.submit_origin(submit_to, loopback_allowed=entry_pages.loopback_request())
        except page_security.NotMTurk as error:
            return entry_pages.cannot_start(f"{error}; open the task from MTurk")
    def work(connection):
        session = session_store.by_assignment(connection, assignment_id)
        if session is None:
            if repeat_session(connection, study(), worker_id, assignment_id) is not None:
                return entry_pages.refuse_repeat(repeat.REFUSAL)
            if repeat.once_per_worker(study()) and repeat.judged(connection, worker_id):
                return entry_pages.refuse_repeat(repeat.JUDGE_REFUSAL)
            refusal = rounds.entry_refusal(connection, study(), round_name, worker_id=worker_id)
            if refusal:
                return entry_pages.refuse_round(refusal)
            if not entry_pages.start_allowed(connection):
                return entry_pages.too_many_starts()
            session = session_store.create(
                connection, worker_id=worker_id, assignment_id=assignment_id, hit_id=hit_id,
                turk_submit_to=submit_to,
            )  # fmt: skip
            rounds.record(connection, study(), session["session_id"], round_name)
        elif session["worker_id"] != worker_id:
            return entry_pages.cannot_start("this assignment belongs to another worker")
        elif session["stage"] != "complete" and _time_ran_out(session):
            minutes = mturk_settings.from_study(study()).assignment_seconds // 60
            return entry_pages.message("Time ran out", TIME_RAN_OUT.format(minutes=minutes), 403)
        return redirect(stage_url(session))

    return entry_pages.entering(work)


def repeat_session(connection, study_config, worker_id: str, assignment_id: str) -> dict | None:
    """With [mturk] once_per_worker, the worker's earlier synced session; else None."""
    if not repeat.once_per_worker(study_config):
        return None
    return repeat.earlier_session(connection, worker_id, assignment_id)


def _time_ran_out(session: dict) -> bool:
    """Whether MTurk has surely abandoned the session's assignment: its deadline has passed
    (a finished session's completion page closes by the same deadline on its own)."""
    deadline = submission_deadline(session)
    return deadline is not None and time.time() > deadline


returned_as = "this HIT"  # study.providers.ParticipantPath


def completion_url(session: dict) -> str | None:
    return None  # MTurk's HIT is submitted by a form on the completion page, not a redirect


def submit_origin(session: dict) -> str | None:
    """The MTurk origin the completion page's form posts to (checked again: a session stored
    before turkSubmitTo was checked never gets a form action elsewhere)."""
    if not session["assignment_id"] or not session["turk_submit_to"]:
        return None
    try:
        return page_security.submit_origin(session["turk_submit_to"], loopback_allowed=entry_pages.loopback_request())
    except page_security.NotMTurk:
        return None


def completion_form(session: dict) -> Markup | None:
    """The form that submits the HIT, or None when the session did not come from a HIT."""
    origin = submit_origin(session)
    if origin is None:
        return None
    return Markup(render_template("mturk/submit_hit.html", session=session,
                                  submit_url=origin + "/mturk/externalSubmit"))  # fmt: skip


def submitted(session: dict) -> bool:
    """MTurk has the submission (sync saw it submitted, approved or rejected)."""
    if not session["assignment_id"]:
        return False
    with reading(engine()) as connection:
        found = connection.execute(
            select(mturk_assignments.c.status).where(
                mturk_assignments.c.assignment_id == session["assignment_id"],
                mturk_assignments.c.status.in_(SUBMITTED),
            )
        ).first()
    return found is not None


def submission_deadline(session: dict) -> float | None:
    """When MTurk stops taking this assignment, at the latest: the worker accepted it before
    entering, so its time ([mturk] assignment_minutes, the HIT's AssignmentDurationInSeconds)
    ends by the session's entry plus that time. None for a session with no Submit HIT form."""
    if submit_origin(session) is None:
        return None
    return session["created_at"] + mturk_settings.from_study(study()).assignment_seconds
