"""The qualification round's reviews as files, for the research team: `study export` writes them
beside metadata.csv whenever the study database holds reviewed submissions.

  review_ratings.csv    one row per reviewer's rating: the submission's pseudonym, its session
                        (metadata.csv's session_id, which leads to the worker), round, reviewer,
                        score, comment, when first rated and last changed, and how many times
                        it was saved (version: 2 or more means the reviewer changed it);
  review_outcomes.csv   one row per submission: its ratings, the adjudicated score if a
                        researcher decided it (with the note), and the outcome by the review
                        rules (study.review.rules), as the workspace's Outcomes page shows it.

The ratings are what a paper reports agreement from (CoAuthor App. D rated each submission 1-5),
so they are written as stored, every reviewer by name (only a comment or note that a
spreadsheet would run as a formula starts with an apostrophe: study.spreadsheet): like
metadata.csv's worker ids these files are private to the team (mode 0600), and releases do not
carry them.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import Connection, select

from study.config import Study
from study.review import decisions, submissions
from study.review import ratings as rating_store
from study.spreadsheet import spreadsheet_row
from study.store import make_engine, reading
from study.store.review_tables import review_decisions, reviewers
from study.store.permissions import write_private
from study.store.simulated import simulated_ids

RATINGS_CSV, OUTCOMES_CSV = "review_ratings.csv", "review_outcomes.csv"
RATING_COLUMNS = (
    "submission", "session_id", "round", "reviewer", "score", "comment", "rated_at",
    "updated_at", "version",
)  # fmt: skip
OUTCOME_COLUMNS = (
    "submission", "session_id", "round", "simulated", "ratings", "scores", "adjudicated_score",
    "adjudicated_by", "adjudication_note", "status", "score", "reason",
)  # fmt: skip


def _utc(epoch: float | None) -> str:
    return "" if epoch is None else datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def _csv(columns, rows) -> bytes:
    handle = io.StringIO(newline="")
    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    # Opened by the team in a spreadsheet and read back by no command: a comment cannot run as a
    # formula there (study.spreadsheet).
    writer.writerows(spreadsheet_row(row) for row in rows)
    return handle.getvalue().encode("utf-8")


def _decisions(connection: Connection) -> dict[str, dict]:
    rows = connection.execute(
        select(review_decisions, reviewers.c.name.label("researcher")).join(
            reviewers, reviewers.c.reviewer_id == review_decisions.c.reviewer_id
        )
    ).mappings()
    return {row["submission_id"]: dict(row) for row in rows}


def write(connection: Connection, study: Study, out: Path) -> tuple[int, int]:
    """Write both files into `out` (an existing folder); returns (submissions, ratings). Writes
    nothing when the study has no reviewed submissions."""
    everything = submissions.all_submissions(connection)
    if not everything:
        return 0, 0
    # A writer who withdrew (study.store.withdrawals) leaves the files, as the logs beside them;
    # they are still written when that leaves none, so an earlier export's rows of theirs go.
    listed = submissions.in_review(connection)
    by_id = {s["submission_id"]: s for s in listed}
    ratings = [r for r in rating_store.all_ratings(connection) if r["submission_id"] in by_id]
    decided = _decisions(connection)
    simulated = simulated_ids(connection)
    write_private(out / RATINGS_CSV, _csv(RATING_COLUMNS, [
        {"submission": r["submission_id"], "session_id": by_id[r["submission_id"]]["session_id"],
         "round": by_id[r["submission_id"]]["round"] or "", "reviewer": r["reviewer"],
         "score": r["score"], "comment": r["comment"], "rated_at": _utc(r["rated_at"]),
         "updated_at": _utc(r["updated_at"]), "version": r["version"]}
        for r in ratings
    ]))  # fmt: skip
    rows = []
    for judged in decisions.judge(connection, study, listed):
        submission, decision = judged.submission, decided.get(judged.submission_id)
        rows.append({
            "submission": judged.submission_id, "session_id": submission["session_id"],
            "round": submission["round"] or "",
            "simulated": str(submission["session_id"] in simulated).lower(),
            "ratings": len(judged.scores), "scores": " ".join(map(str, judged.scores)),
            "adjudicated_score": "" if decision is None else decision["score"],
            "adjudicated_by": "" if decision is None else decision["researcher"],
            "adjudication_note": "" if decision is None else decision["note"],
            "status": judged.outcome.status,
            "score": "" if judged.outcome.score is None else judged.outcome.score,
            "reason": judged.outcome.reason or "",
        })  # fmt: skip
    write_private(out / OUTCOMES_CSV, _csv(OUTCOME_COLUMNS, rows))
    return len(rows), len(ratings)


def export_beside(study: Study, out: Path) -> str | None:
    """`study export`'s line about the review files it wrote into `out`, or None (no reviews)."""
    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            listed, rated = write(connection, study, out)
    finally:
        engine.dispose()
    if not listed:
        return None
    return f"Exported {rated} reviewers' ratings of {listed} submissions to {out / RATINGS_CSV} and {out / OUTCOMES_CSV}"
