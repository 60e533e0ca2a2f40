"""Prolific's participant path through the task server (study.providers.ParticipantPath):
`/task?PROLIFIC_PID=&STUDY_ID=&SESSION_ID=` in, and the completion page out to Prolific's
completion URL with the study's completion code. The task server finds it through the registry
(study.providers.participant_paths), so it names no provider.

Cases on entry, in order (as MTurk's in study.server.participant.task):
  1. preview: no PID, or Prolific's placeholder unfilled (a researcher's preview) -> the preview;
  2. a link without STUDY_ID or SESSION_ID, or for a Prolific study this study did not create
     -> refused with the fix;
  3. returning participant: their session for this Prolific study resumes (one session per
     participant and study, whatever SESSION_ID a second visit brings), unless `sync` saw them
     return the submission or Prolific time it out: Prolific then takes nothing more from them
     (its place went back to others), so they are told so rather than write on unpaid;
  4. new participant: refused when [prolific] once_per_participant and `sync` has seen them
     submit to another of the study's Prolific studies (a block group can reach them too late),
     or when the round refuses them (study.review.rounds); else a new session, with the PID as
     its worker id, SESSION_ID (Prolific's submission id) as its assignment and STUDY_ID as
     its HIT, so review, releases and the repeat guard treat PIDs exactly as worker ids.

At the end, the completion page redirects to [prolific] completion_url with the code of the
Prolific study the session came from, as long as Prolific may still take the submission (the
maximum allowed time from entry, at least an hour after the survey) and `sync` has not seen it.
Browsers apply a page's `form-action` policy to the whole redirect chain of a form's POST, and
the last form of the path (the survey) is answered by that redirect, so every page of a Prolific
session allows posting towards the completion URL's origin (study.server.stages.at_stage asks
`completion_url` of every path).
"""


from __future__ import annotations

from urllib.parse import urlencode

from flask import redirect

from study.prolific import settings as prolific_settings
from study.review import rounds
from study.server import entry_pages
from study.server.context import engine, study
from study.server.stages import stage_url
from study.store import reading
from study.store import prolific as prolific_store
from study.store import sessions as session_store

PARAMETERS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
LEFT = {
    "RETURNED": "You returned this study on Prolific, so it can no longer be completed or paid.",
    "TIMED-OUT": "Prolific timed out your submission of this study (its maximum time passed), so "
                 "it can no longer be completed or paid.",
}
REPEAT_REFUSAL = (
    "You have already taken part in this study, and each participant may take part only once. "
    "Please return your submission on Prolific; thank you for your interest."
)


def arrives(args) -> bool:
    return any(name in args for name in PARAMETERS)


def _filled(value: str) -> bool:
    # Prolific's preview leaves its placeholders ({{%PROLIFIC_PID%}}) in the URL.
    return bool(value) and value.isalnum()


def enter(args, round_name: str | None):
    pid = args.get("PROLIFIC_PID", "").strip()
    study_id = args.get("STUDY_ID", "").strip()
    submission_id = args.get("SESSION_ID", "").strip()
    if not _filled(pid):
        return entry_pages.preview(prolific=True)
    if not _filled(study_id) or not _filled(submission_id):
        return entry_pages.message("Cannot start", "the link is missing STUDY_ID or SESSION_ID; open the "
                        "study from Prolific", 400)  # fmt: skip
    def work(connection):
        known = prolific_store.study_row(connection, study_id)
        if known is None:
            return entry_pages.message("Cannot start", "this Prolific study is not one of this study's; "
                            "open the study from Prolific", 400)  # fmt: skip
        session = prolific_store.session_for(connection, pid, study_id)
        if session is not None and (gone := prolific_store.left(connection, session["assignment_id"])):
            return entry_pages.message("Submission closed", LEFT[gone] + " Thank you for your time.", 403)
        if session is None:
            if repeat_session(connection, study(), pid, study_id) is not None:
                return entry_pages.message("Already taken part", REPEAT_REFUSAL, 403)
            if session_store.by_assignment(connection, submission_id) is not None:
                return entry_pages.message("Cannot start", "this submission belongs to another participant",
                                400)  # fmt: skip
            refusal = rounds.entry_refusal(connection, study(), round_name or known["round"],
                                           worker_id=pid, returning=returned_as)  # fmt: skip
            if refusal:
                return entry_pages.message("Not this round", refusal, 403)
            if not entry_pages.start_allowed(connection):
                return entry_pages.message("Please wait", "Too many sessions were started from your network "
                                "in the last hour; please try again later.", 429)  # fmt: skip
            session = session_store.create(
                connection, worker_id=pid, assignment_id=submission_id, hit_id=study_id
            )
            rounds.record(connection, study(), session["session_id"], round_name or known["round"])
        return redirect(stage_url(session))

    return entry_pages.entering(work)


def repeat_session(connection, study_config, pid: str, study_id: str) -> dict | None:
    """With [prolific] once_per_participant, the participant's earlier synced session for
    another of the study's Prolific studies; else None."""
    if not prolific_settings.from_study(study_config).once_per_participant:
        return None
    return prolific_store.earlier_session(connection, pid, study_id)


returned_as = "this submission"  # study.providers.ParticipantPath


def completion_url(session: dict) -> str | None:
    """Prolific's completion URL with this session's study's code; None if not from Prolific."""
    if not session.get("hit_id") or not session.get("worker_id"):
        return None
    with reading(engine()) as connection:
        known = prolific_store.study_row(connection, session["hit_id"])
    if known is None:
        return None
    base = prolific_settings.from_study(study()).completion_url
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}{urlencode({'cc': known['completion_code']})}"


def submit_origin(session: dict) -> str | None:
    return None  # no form: the completion page redirects (its origin is allowed by at_stage)


def completion_form(session: dict) -> None:
    return None


def submitted(session: dict) -> bool:
    """Prolific has the submission (`sync` saw it finished): the completion page then says only
    that the session is finished, as MTurk's does, instead of handing out the study's code."""
    if not session.get("assignment_id") or completion_url(session) is None:
        return False
    with reading(engine()) as connection:
        return prolific_store.submitted(connection, session["assignment_id"])


def submission_deadline(session: dict) -> float | None:
    """When Prolific times this submission out, at the latest: the participant started it
    before entering, and has the study's maximum allowed time ([prolific] maximum_minutes, else
    Prolific's default from estimated_minutes). None for a session not from Prolific."""
    if completion_url(session) is None:
        return None
    minutes = prolific_settings.from_study(study()).maximum_allowed_minutes
    return session["created_at"] + minutes * 60
