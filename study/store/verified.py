"""Which sessions come from a real participant, as far as the study can tell.

Anyone can open /task with a made-up workerId and assignmentId, or (without a list) any access
code, and so create a session. Such a session must not decide anything about real people, so
the repeat guards and releases (study.release.source, through study.providers) count only:

- a session whose submission a recruitment provider has synced, for the same worker, as
  accepted work: each provider says what that is (`synced` of study.providers.Provider; MTurk:
  an assignment submitted or approved, Prolific: a submission awaiting review or approved);
- a lab session whose access code is on [session] access_codes_file, or any lab session when
  the study keeps no list (then every code was valid at entry).
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, false, or_, select

from study.store.db import sessions


def counted(access_codes: frozenset[str] | None, synced: list):
    """The condition a counted session meets (see the module's description); `synced`: each
    provider's condition "synced for its worker"."""
    lab = and_(sessions.c.assignment_id.is_(None), sessions.c.access_code.is_not(None))
    if access_codes is not None:
        lab = and_(lab, sessions.c.access_code.in_(sorted(access_codes)))
    provider = or_(false(), *synced)
    return or_(and_(sessions.c.assignment_id.is_not(None), provider), lab)


def counted_session_ids(
    connection: Connection, access_codes: frozenset[str] | None, synced: list
) -> set[str]:
    rows = connection.execute(select(sessions.c.session_id).where(counted(access_codes, synced)))
    return {row[0] for row in rows}
