"""Which sessions come from a real participant, as far as the study can tell.

Anyone can open /task with a made-up workerId and assignmentId, or (without a list) any access
code, and so create a session. Such a session must not decide anything about real people, so
the repeat check (study.mturk.repeat) and releases (study.release.source) count only:

- an MTurk session whose assignment `study mturk sync` has seen at MTurk, for the same worker,
  submitted or approved (a rejected one is not a participant's accepted work);
- a Prolific session whose submission `study prolific sync` has seen at Prolific, for the same
  participant, awaiting review or approved (study.store.prolific);
- a lab session whose access code is on [session] access_codes_file, or any lab session when
  the study keeps no list (then every code was valid at entry).
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, exists, or_, select

from study.store.db import mturk_assignments, sessions
from study.store.prolific import synced_submission

ACCEPTED_WORK = ("Submitted", "Approved")


def synced_assignment():
    """The condition "this session's assignment was synced from MTurk for its worker"."""
    return exists().where(
        mturk_assignments.c.assignment_id == sessions.c.assignment_id,
        mturk_assignments.c.worker_id == sessions.c.worker_id,
        mturk_assignments.c.status.in_(ACCEPTED_WORK),
    )


def counted(access_codes: frozenset[str] | None):
    """The condition a counted session meets (see the module's description)."""
    lab = and_(sessions.c.assignment_id.is_(None), sessions.c.access_code.is_not(None))
    if access_codes is not None:
        lab = and_(lab, sessions.c.access_code.in_(sorted(access_codes)))
    provider = or_(synced_assignment(), synced_submission())
    return or_(and_(sessions.c.assignment_id.is_not(None), provider), lab)


def counted_session_ids(connection: Connection, access_codes: frozenset[str] | None) -> set[str]:
    rows = connection.execute(select(sessions.c.session_id).where(counted(access_codes)))
    return {row[0] for row in rows}
