"""`sync`: MTurk's assignments reconciled with the study's sessions.

The task server binds each session to (worker, assignment, HIT) when a worker arrives, and the
completion page submits the session's verification code with the assignment. `sync` pulls every
assignment of the study's HITs, stores it in mturk_assignments, and matches it to its session by
assignment id, checking that worker, HIT and code agree. Disagreements are reported, never
silently fixed: they are what peers' trackers complain about most (the database and MTurk
disagreeing on who submitted what). A session with no submitted assignment is warned about once,
at the sync that first finds it (mturk_missing_submissions), and counted at later ones: MTurk
lists no returned or abandoned assignment, so nothing later would tell the researcher more.

It also keeps the books in step with MTurk: reward entries bound to submitted assignments,
confirmed when MTurk approved (also by auto-approval), cancelled when rejected or never taken
(slots of closed and deleted HITs are released); it never reserves anything itself, so a
submission it finds without a reservation is recorded "unreserved" and approving it checks the
cap (study.mturk.ledger, study.mturk.budget);
HITs of this study that a crashed post left unrecorded are adopted; with once_per_worker the
exclusion qualification is granted to every worker who submitted writing (not judging: a judge
rates several tasks of a round, each a HIT the qualification would close to them; the task
server keeps judges from writing instead, study.mturk.repeat).
"""

from __future__ import annotations

import datetime as dt
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from study.mturk import hits as hit_module
from study.mturk import ledger, posting, qualifications
from study.mturk.client import MTurkError
from study.mturk.context import Context
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.db import sessions
from study.store.mturk import mturk_assignments, mturk_missing_submissions

CODE_FIELD = "verificationCode"  # the completion page's hidden field (templates/complete.html)


@dataclass
class Reconciled:
    """One assignment as MTurk reports it, with what the study knows about it."""

    assignment_id: str
    hit_id: str
    worker_id: str
    status: str
    submitted_code: str | None
    session: dict | None
    problems: list[str] = field(default_factory=list)


@dataclass
class SyncReport:
    assignments: list[Reconciled] = field(default_factory=list)
    sessions_without_assignment: list[dict] = field(default_factory=list)
    # Those of them an earlier sync already warned about: counted, not warned about again.
    warned_before: set[str] = field(default_factory=set)
    adopted_hits: list[str] = field(default_factory=list)
    excluded_workers: list[str] = field(default_factory=list)
    # HIT id -> open assignments nobody reserved under the cap (extended outside `study mturk`)
    unreserved_slots: dict[str, int] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        found = [
            f"HIT {hit_id} has {count} open assignments the budget never reserved (extended or "
            "re-opened outside `study mturk`?): approving their submissions checks the cap first, "
            "but MTurk's auto-approval would pay them regardless; `study mturk expire` it to stop"
            for hit_id, count in self.unreserved_slots.items()
        ]
        found += [
            f"{a.assignment_id} (worker {a.worker_id}): {p}"
            for a in self.assignments
            for p in a.problems
        ]
        found += [
            f"session {s['session_id']} (worker {s['worker_id']}, assignment {s['assignment_id']}) has no "
            "submitted assignment on MTurk: still working, returned the HIT, or submitted nothing"
            for s in self.sessions_without_assignment
            if s["session_id"] not in self.warned_before
        ]
        return found


def parse_answer(answer_xml: str | None) -> dict[str, str]:
    """QuestionFormAnswers XML -> {QuestionIdentifier: FreeText}."""
    if not answer_xml:
        return {}
    try:
        root = ET.fromstring(answer_xml)
    except ET.ParseError:
        return {}
    answers = {}
    for answer in root.iter():
        if answer.tag.endswith("Answer") and not answer.tag.endswith("QuestionFormAnswers"):
            key = next((c.text for c in answer if c.tag.endswith("QuestionIdentifier")), None)
            value = next((c.text for c in answer if c.tag.endswith("FreeText")), None)
            if key:
                answers[key] = (value or "").strip()
    return answers


def reconcile(assignment: dict, session: dict | None) -> list[str]:
    """What disagrees between an MTurk assignment and the session bound to its id."""
    if session is None:
        return [
            "no session was bound to this assignment: the worker never opened the task through "
            "/task with it, or the task server uses another database"
        ]
    problems = []
    if session["worker_id"] != assignment["WorkerId"]:
        problems.append(f"the session belongs to worker {session['worker_id']}")
    if session["hit_id"] != assignment["HITId"]:
        problems.append(f"the session was opened for HIT {session['hit_id']}")
    code = parse_answer(assignment.get("Answer")).get(CODE_FIELD)
    if not code:
        problems.append("the submission carries no verification code")
    elif code != session["verification_code"]:
        expected = session["verification_code"] or "none yet: the session is unfinished"
        problems.append(f"verification code {code!r} does not match the session's ({expected})")
    return problems


def sync(ctx: Context) -> SyncReport:
    report = SyncReport()
    known = {r["hit_id"] for r in hit_module.study_hits(ctx, refresh=False)}
    for hit in ctx.requester.pages("ListHITs", "HITs"):
        if hit["HITId"] not in known and posting.is_ours(ctx, hit):
            posting.adopt(ctx, hit)
            report.adopted_hits.append(hit["HITId"])
    rows = hit_module.study_hits(ctx, refresh=True)
    submitted_ids = set()
    for row in rows:
        hit = row.get("HIT")
        if hit is None:  # deleted: its assignments are settled and stay as last synced
            hit_module.fit_reservations(ctx, row["hit_id"], None)
            # MTurk no longer lists them, so the last sync's record says who submitted.
            submitted_ids.update(
                a["assignment_id"] for a in stored(ctx) if a["hit_id"] == row["hit_id"]
            )
            continue
        for found in record_hit(ctx, hit):
            if hit_module.is_judging(row):
                # A judge's assignment has no writing session to match; `study judging review`
                # checks it against its judging task instead.
                found.problems = []
            submitted_ids.add(found.assignment_id)
            report.assignments.append(found)
        with reading(ctx.engine) as connection:
            reserved = len(hit_module.unbound_slots(connection, ctx, hit["HITId"]))
        unreserved = hit_module.open_slots(hit) - reserved
        if unreserved > 0:
            report.unreserved_slots[hit["HITId"]] = unreserved
    report.sessions_without_assignment = _unsubmitted_sessions(
        ctx, {r["hit_id"] for r in rows}, submitted_ids
    )
    report.warned_before = _remember_missing(ctx, report.sessions_without_assignment)
    if ctx.settings.once_per_worker:
        report.excluded_workers = exclude_submitters(ctx)
    return report


def record_hit(ctx: Context, hit: dict) -> list[Reconciled]:
    """Store every submitted assignment of one HIT with its reward entry, then release the
    reserved slots the HIT can no longer use."""
    found = [
        _store(ctx, hit, assignment)
        for assignment in ctx.requester.pages(
            "ListAssignmentsForHIT", "Assignments", HITId=hit["HITId"]
        )
    ]
    hit_module.fit_reservations(ctx, hit["HITId"], hit, unrecorded=0)
    return found


def _store(ctx: Context, hit: dict, assignment: dict) -> Reconciled:
    with writing(ctx.engine) as connection:
        session = session_store.by_assignment(connection, assignment["AssignmentId"])
        code = parse_answer(assignment.get("Answer")).get(CODE_FIELD)
        row = {
            "environment": ctx.environment,
            "assignment_id": assignment["AssignmentId"],
            "hit_id": assignment["HITId"],
            "worker_id": assignment["WorkerId"],
            "status": assignment["AssignmentStatus"],
            "submitted_at": _epoch(assignment.get("SubmitTime")),
            "answer": assignment.get("Answer"),
            "submitted_code": code,
            "session_id": session["session_id"] if session else None,
            "requester_feedback": assignment.get("RequesterFeedback"),
            "synced_at": time.time(),
        }
        upsert(connection, row)
        entry = ledger.bind_reward(
            connection,
            ctx.environment,
            hit_id=hit["HITId"],
            assignment_id=assignment["AssignmentId"],
            worker_id=assignment["WorkerId"],
            reward=Decimal(hit["Reward"]),
            max_assignments=hit["MaxAssignments"],
            budget=None,
        )  # money MTurk already owes is recorded, never refused
        status = assignment["AssignmentStatus"]
        if status == "Approved" and entry["status"] != "confirmed":
            ledger.confirm(connection, entry["id"], "approved on MTurk (seen by sync)")
        elif status == "Rejected" and entry["status"] != "cancelled":
            ledger.settle(connection, entry["id"], "cancelled", "rejected on MTurk (seen by sync)")
    return Reconciled(
        assignment["AssignmentId"],
        assignment["HITId"],
        assignment["WorkerId"],
        status,
        code,
        session,
        reconcile(assignment, session),
    )


def upsert(connection, row: dict) -> None:
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(mturk_assignments).values(**row)
    changing = {k: statement.excluded[k] for k in row if k not in ("environment", "assignment_id")}
    connection.execute(
        statement.on_conflict_do_update(
            index_elements=["environment", "assignment_id"], set_=changing
        )
    )


def _unsubmitted_sessions(ctx: Context, hit_ids: set[str], submitted: set[str]) -> list[dict]:
    with reading(ctx.engine) as connection:
        rows = connection.execute(select(sessions).where(sessions.c.hit_id.in_(hit_ids))).mappings()
        return [dict(r) for r in rows if r["assignment_id"] not in submitted]


def _remember_missing(ctx: Context, missing: list[dict]) -> set[str]:
    """Record the sessions with no submission on MTurk; answer those recorded before."""
    ids = [s["session_id"] for s in missing]
    if not ids:
        return set()
    with reading(ctx.engine) as connection:
        seen = set(connection.execute(
            select(mturk_missing_submissions.c.session_id).where(
                mturk_missing_submissions.c.environment == ctx.environment,
                mturk_missing_submissions.c.session_id.in_(ids))
        ).scalars())  # fmt: skip
    new = [i for i in ids if i not in seen]
    if new:
        with writing(ctx.engine) as connection:
            dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
            now = time.time()
            # Two syncs at once may both find a session new: both warn, one row stays.
            connection.execute(dialect.insert(mturk_missing_submissions).on_conflict_do_nothing(), [
                {"environment": ctx.environment, "session_id": i, "first_seen_at": now} for i in new
            ])  # fmt: skip
    return seen


def exclude_submitters(ctx: Context) -> list[str]:
    """Grant the exclusion qualification to each worker who submitted a writers' HIT and does
    not hold it yet. Judging HITs require it too, so writers never judge; a judge's assignments
    do not earn it, or the round's other judging HITs would be closed to them."""
    type_id = qualifications.ensure_exclusion(ctx.requester, ctx.engine, ctx.study)
    judging = [r["hit_id"] for r in hit_module.rows(ctx) if r["hit_id"] and hit_module.is_judging(r)]
    with reading(ctx.engine) as connection:
        pending = connection.execute(
            select(mturk_assignments.c.assignment_id, mturk_assignments.c.worker_id).where(
                mturk_assignments.c.environment == ctx.environment,
                mturk_assignments.c.excluded_at.is_(None),
                mturk_assignments.c.hit_id.not_in(judging),
            )
        ).all()
    workers = sorted({worker for _, worker in pending})
    qualifications.grant(ctx.requester, type_id, workers)
    with writing(ctx.engine) as connection:
        for assignment_id, _ in pending:
            connection.execute(
                mturk_assignments.update()
                .where(
                    mturk_assignments.c.environment == ctx.environment,
                    mturk_assignments.c.assignment_id == assignment_id,
                )
                .values(excluded_at=time.time())
            )
    return workers


def fetch(ctx: Context, assignment_id: str) -> tuple[dict, dict]:
    """MTurk's assignment and its HIT, stored locally as `sync` would; refuses an assignment
    of a HIT this study did not post (another study's on the same account)."""
    try:
        response = ctx.requester.call("GetAssignment", AssignmentId=assignment_id)
    except MTurkError as error:
        # MTurk answers "does not exist" for a typo, for an id from the other environment, and
        # for an assignment its worker returned or abandoned: MTurk keeps no record of those,
        # so they can be neither approved nor bonused.
        if error.certain and "does not exist" in error.message.lower():
            raise ValueError(
                f"MTurk has no assignment {assignment_id} in {ctx.environment}: a worker who "
                "returned or abandoned a HIT leaves no assignment to approve or bonus, and an id "
                "from the sandbox is unknown to --live and the other way round. Fix: check the "
                "id and the environment (`study mturk sync DIR` lists the submitted "
                "assignments); nothing was paid or recorded."
            ) from None
        raise
    assignment, hit = response["Assignment"], response["HIT"]
    ours = {r["hit_id"] for r in hit_module.rows(ctx) if r["hit_id"]}
    if hit["HITId"] not in ours and not posting.is_ours(ctx, hit):
        raise ValueError(
            f"Assignment {assignment_id} belongs to HIT {hit['HITId']}, which is not one of this "
            f"study's HITs in {ctx.environment}. Fix: check the assignment id and the study "
            "folder (`study mturk list` shows this study's HITs)."
        )
    with writing(ctx.engine) as connection:
        session = session_store.by_assignment(connection, assignment_id)
        upsert(
            connection,
            {
                "environment": ctx.environment,
                "assignment_id": assignment_id,
                "hit_id": hit["HITId"],
                "worker_id": assignment["WorkerId"],
                "status": assignment["AssignmentStatus"],
                "submitted_at": _epoch(assignment.get("SubmitTime")),
                "answer": assignment.get("Answer"),
                "submitted_code": parse_answer(assignment.get("Answer")).get(CODE_FIELD),
                "session_id": session["session_id"] if session else None,
                "synced_at": time.time(),
            },
        )
    return assignment, hit


def stored(ctx: Context, *, status: str | None = None) -> list[dict]:
    query = select(mturk_assignments).where(mturk_assignments.c.environment == ctx.environment)
    if status:
        query = query.where(mturk_assignments.c.status == status)
    with reading(ctx.engine) as connection:
        return [
            dict(r)
            for r in connection.execute(query.order_by(mturk_assignments.c.submitted_at)).mappings()
        ]


def _epoch(value) -> float | None:
    if value is None:
        return None
    return value.timestamp() if isinstance(value, dt.datetime) else float(value)
