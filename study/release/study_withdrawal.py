"""`study withdraw WORKER_ID --study DIR`: the withdrawal recorded in the study's own database, so
the writer's sessions leave every analysis of the study folder made after it (study export,
report, status, the judging round's results, the reviewers' workspace, qualify's grants), not
only the releases built with a key (study.release.withdraw); `study qualify` pays their
qualification work without a review and revokes a qualification it granted them before, which
`record_in_study` tells the researcher of (`qualified_at`). The rows themselves stay, and the payment records with them:
the writer was paid for the work, and the MTurk and Prolific ledgers stay auditable.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from study import config as study_config
from study.release.withdraw import Withdrawal, near_misses


class StudyWithdrawalError(ValueError):
    """The study folder cannot take the withdrawal; nothing was recorded."""


def open_study(directory: str):
    """The study in `directory` and an engine on its database, or StudyWithdrawalError before
    anything is written (a study never served has no database to record in)."""
    from study.store import create_tables, make_engine
    from study.store.engine import sqlite_file

    try:
        study = study_config.load(directory)
    except study_config.ConfigError as error:
        raise StudyWithdrawalError(str(error)) from None
    database = sqlite_file(study.database_url)
    if database is not None and not Path(database).exists():
        raise StudyWithdrawalError(
            f"{directory}: study '{study.name}' has not been served yet: no database at {database}, "
            "so no session to withdraw. Check the folder (--study)."
        )
    engine = make_engine(study.database_url)
    create_tables(engine)  # an older database gets the withdrawals table
    return study, engine


def record_in_study(engine, directory: str, worker_id: str, *, today: str, reason: str,
                    again: str) -> list[str]:
    """Record the withdrawal; the lines to print. `again`: the command's other options, for the
    command a near miss suggests."""
    from study.store import reading, writing
    from study.store import withdrawals as store

    with writing(engine) as connection:
        entry, new = store.record(connection, worker_id, today=today, reason=reason)
    with reading(engine) as connection:
        writers = store.writers(connection)
        withdrawn = store.withdrawn_ids(connection)
        sessions_out, _ = store.left_out(connection)
    if not new:
        return [f"Already withdrawn from the study in {directory} (recorded {entry['recorded']}); nothing to do."]
    lines = [
        f"Recorded the withdrawal in the study's database ({directory}): their sessions leave "
        "study export, report and status, a release built from the folder, the judging round's "
        "results and the reviewers' workspace, the task server starts no new session for them, "
        "and study qualify pays their qualification work unreviewed and grants them nothing, "
        f"from now on ({sessions_out} session(s) of withdrawn writers in all). Payments and the "
        "MTurk and Prolific records stay as they are."
    ]
    with reading(engine) as connection:
        held = qualified_at(connection, worker_id)
    if held:
        lines.append(
            f"They hold the qualification study qualify granted them ({', '.join(held)}), so the "
            "platform still offers them the main round (the task server turns them away) until "
            f"it is revoked: the next `study qualify {shlex.quote(directory)}` revokes it."
        )
    if worker_id not in writers:
        # A mistyped id is recorded as readily as a real one, and leaves nothing out.
        lines.append(
            f"Note: the study in {directory} has no session of this writer. Check the id as the "
            "study's data spells it (the worker_id column of `study export`'s metadata.csv; MTurk "
            "ids are case-sensitive) and record it again."
        )
        recorded = [Withdrawal(worker_id=w, recorded="") for w in withdrawn]
        for missed, writer in near_misses(recorded, writers):
            if missed == worker_id:
                lines.append(
                    f"The study has {writer!r}: if that is who withdrew, run: study withdraw "
                    f"{shlex.quote(writer)} {again}"
                )
    return lines


def qualified_at(connection, worker_id: str) -> list[str]:
    """Where `study qualify` granted this writer the main round's qualification and has not
    revoked it: "MTurk sandbox", "MTurk live", "Prolific" (its grant records)."""
    from sqlalchemy import select

    from study.store.prolific import prolific_members
    from study.store.review_tables import review_grants

    mturk = connection.execute(
        select(review_grants.c.environment).where(review_grants.c.worker_id == worker_id).distinct()
    ).scalars().all()
    prolific = connection.execute(
        select(prolific_members.c.environment).where(
            prolific_members.c.participant_id == worker_id, prolific_members.c.role == "qualified"
        ).distinct()
    ).scalars().all()
    # Environments are "sandbox:<account>", "live:<account>", "prolific:<researcher>": the
    # researcher knows their own account, and the line stays short.
    places = sorted({f"MTurk {e.split(':')[0]}" for e in mturk})
    return places + (["Prolific"] if prolific else [])
