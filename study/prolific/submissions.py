"""`sync`: Prolific's submissions reconciled with the study's sessions and books.

The task server binds each session to (PID, Prolific study, SESSION_ID = the submission id)
when a participant arrives, and sends them back to Prolific with the study's completion code.
`sync` pulls every submission of this study's Prolific studies (never another's), stores it in
prolific_submissions and matches it to its session by submission id, checking that participant,
study and code agree. Disagreements are reported, never silently fixed.

The books follow Prolific: a submission awaiting review takes a reserved place (or is recorded
"unreserved" if none is left: places added on Prolific's website); approved confirms it;
rejected, returned and timed-out submissions free their place, which Prolific re-offers; a
stopped or completed study releases the places nobody can take any more. With [prolific]
once_per_participant every submitter joins the "done" group, which new studies block.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from study.prolific import groups, ledger, studies
from study.prolific.client import ProlificError
from study.prolific.context import Context
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.db import sessions
from study.store.prolific import prolific_submissions

SUBMITTED = ("AWAITING REVIEW", "APPROVED", "REJECTED")
GONE = ("RETURNED", "TIMED-OUT", "REJECTED")


@dataclass
class Reconciled:
    submission_id: str
    study_id: str
    participant_id: str
    status: str
    session: dict | None
    problems: list[str] = field(default_factory=list)


@dataclass
class SyncReport:
    submissions: list[Reconciled] = field(default_factory=list)
    sessions_without_submission: list[dict] = field(default_factory=list)
    adopted_studies: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        found = [f"{s.submission_id}: {p}" for s in self.submissions for p in s.problems]
        found += [
            f"session {s['session_id']} (Prolific study {s['hit_id']}) has no finished "
            "submission on Prolific: still working, returned, or timed out"
            for s in self.sessions_without_submission
        ]
        return found


def reconcile(submission: dict, session: dict | None, completion_code: str) -> list[str]:
    """What disagrees between a Prolific submission and the session bound to its id."""
    if session is None:
        return [
            "no session was bound to this submission: the participant never opened the task "
            "through /task with it, or the task server uses another database"
        ]
    problems = []
    if session["worker_id"] != submission["participant_id"]:
        problems.append("the session belongs to another participant")
    if session["hit_id"] != submission["study_id"]:
        problems.append(f"the session was opened for Prolific study {session['hit_id']}")
    code = submission.get("study_code") or submission.get("entered_code")
    if submission["status"] in SUBMITTED:
        if not code or code == "NOCODE":
            problems.append("the submission carries no completion code")
        elif code != completion_code:
            problems.append(f"completion code {code!r} is not the study's")
        if session["stage"] != "complete":
            problems.append(f"the session stopped at the {session['stage']} step")
    return problems


def sync(ctx: Context) -> SyncReport:
    report = SyncReport(adopted_studies=studies.recover(ctx))
    ours = [r for r in studies.rows(ctx) if r["study_id"]]
    for record in ours:
        current = ctx.client.get(f"studies/{record['study_id']}/")
        studies.refresh(ctx, record["study_id"], current)
        found = [
            store(ctx, record, submission)
            for submission in ctx.client.pages(f"studies/{record['study_id']}/submissions/")
        ]
        report.submissions += found
        if current["status"] in studies.CLOSED:
            working = sum(s.status == "ACTIVE" for s in found)
            studies.release_places(ctx, record["study_id"], keep=working,
                                   note="the study closed without this place taken")  # fmt: skip
    seen = {s.submission_id for s in report.submissions if s.status in SUBMITTED}
    with reading(ctx.engine) as connection:
        rows = connection.execute(
            select(sessions).where(sessions.c.hit_id.in_([r["study_id"] for r in ours]))
        ).mappings()
        report.sessions_without_submission = [dict(r) for r in rows if r["assignment_id"] not in seen]
    if ctx.settings.once_per_participant:
        submitters = {s.participant_id: None for s in report.submissions if s.status in SUBMITTED}
        report.blocked = groups.add(ctx, "done", submitters)
    return report


def store(ctx: Context, record: dict, submission: dict) -> Reconciled:
    """Store one submission with its reward entry, as Prolific reports it now."""
    status = submission["status"]
    fee = None
    if status in ("AWAITING REVIEW", "APPROVED"):
        with reading(ctx.engine) as connection:
            bound = ledger.reward_entry(connection, ctx.environment, submission["id"])
            spare = ledger.open_places(connection, ctx.environment, record["study_id"])
        if bound is None and not spare:  # only then is Prolific's fee for one place needed
            fee = studies.place_charge(ctx, record["reward"]).fees
    with writing(ctx.engine) as connection:
        session = session_store.by_assignment(connection, submission["id"])
        upsert(connection, {
            "environment": ctx.environment,
            "submission_id": submission["id"],
            "study_id": record["study_id"],
            "participant_id": submission["participant_id"],
            "status": status,
            "started_at": submission.get("started_at"),
            "completed_at": submission.get("completed_at"),
            "study_code": submission.get("study_code") or submission.get("entered_code"),
            "session_id": session["session_id"] if session else None,
            "synced_at": time.time(),
        })  # fmt: skip
        entry = ledger.reward_entry(connection, ctx.environment, submission["id"])
        if status in ("AWAITING REVIEW", "APPROVED"):
            entry = ledger.bind_reward(
                connection,
                ctx.environment,
                study_id=record["study_id"],
                submission_id=submission["id"],
                participant_id=submission["participant_id"],
                reward=record["reward"],
                fee=fee or 0,
                currency=ctx.currency,
            )
            if status == "APPROVED" and entry["status"] != "confirmed":
                ledger.settle(connection, entry["id"], "confirmed", "approved on Prolific (seen by sync)")
        elif status in GONE and entry is not None and entry["status"] != "confirmed":
            ledger.free_place(connection, entry, f"{status.lower()} on Prolific (seen by sync)")
    return Reconciled(
        submission["id"],
        record["study_id"],
        submission["participant_id"],
        status,
        session,
        reconcile({**submission, "study_id": record["study_id"]}, session, record["completion_code"]),
    )


def upsert(connection, row: dict) -> None:
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(prolific_submissions).values(**row)
    changing = {k: statement.excluded[k] for k in row if k not in ("environment", "submission_id")}
    connection.execute(
        statement.on_conflict_do_update(index_elements=["environment", "submission_id"], set_=changing)
    )


def stored(ctx: Context, *, status: str | None = None) -> list[dict]:
    query = select(prolific_submissions).where(prolific_submissions.c.environment == ctx.environment)
    if status:
        query = query.where(prolific_submissions.c.status == status)
    with reading(ctx.engine) as connection:
        return [dict(r) for r in connection.execute(query.order_by(prolific_submissions.c.completed_at))
                .mappings()]  # fmt: skip


def fetch(ctx: Context, submission_id: str) -> tuple[dict, dict]:
    """Prolific's submission and this study's record of its Prolific study; refuses a
    submission of a study this study did not create."""
    try:
        submission = ctx.client.get(f"submissions/{submission_id}/")
    except ProlificError as error:
        if error.status != 404:
            raise
        raise studies.StudyError(_not_a_submission(ctx, submission_id)) from None
    study_id = submission.get("study_id") or (submission.get("study") or {}).get("id")
    record = studies.row(ctx, study_id)
    store(ctx, record, submission)
    return submission, record


def _not_a_submission(ctx: Context, given: str) -> str:
    """Why Prolific knows no submission `given`, and which id to give instead. Prolific's web
    app pays bonuses by participant id, so a researcher may well give a PID here."""
    theirs = [s for s in stored(ctx) if s["participant_id"] == given]
    if theirs:
        listed = ", ".join(f"{s['submission_id']} (Prolific study {s['study_id']}, {s['status']})"
                           for s in theirs)  # fmt: skip
        return (f"{given} is a participant's id (PID), not a submission id. Fix: give their "
                f"submission's id instead: {listed}.")
    return (f"Prolific has no submission {given}. Fix: copy the submission id (not the "
            "participant's PID) from the proposals of `study prolific review DIR` or from "
            "`study prolific ledger DIR --all`, after `study prolific sync DIR`.")


def by_status(ctx: Context, study_id: str, study_status: str) -> Counter[str]:
    """How many of a Prolific study's submissions are in each status (AWAITING REVIEW,
    APPROVED, ...), as Prolific reports them now. Nobody can join a draft (UNPUBLISHED), so a
    draft has none and Prolific is not asked: a study with many drafts is listed without a call
    for each."""
    if study_status == "UNPUBLISHED":
        return Counter()
    return Counter(s["status"] for s in ctx.client.pages(f"studies/{study_id}/submissions/"))
