"""The round's results: every rating joined to its item's session, the judges' gold checks,
agreement, and the figures per session and per arm.

`collect` reads the database once; everything after it is a pure function of what it read, so
the export, the report and the release compute the same numbers. A rating counts ("kept") when
it is of a study item (not gold), its task was submitted, and its judge was not flagged by the
gold check (with [judging] exclude_failed_gold; otherwise flagged judges' ratings are kept and
only marked).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Connection, select

from study.config import Study
from study.judging import gold as gold_module
from study.judging.settings import JudgingSettings, from_study
from study.review.agreement.interval import AlphaEstimate, alpha_with_interval
from study.store.db import sessions
from study.store.judging import judging_items, judging_ratings, judging_tasks
from study.store.withdrawals import withdrawn_ids, withdrawn_session_ids

RATING_COLUMNS = (
    "session_id", "condition", "paradigm", "unit", "position", "item_id", "judge", "score",
    "judge_flagged", "kept", "text",
)  # fmt: skip


@dataclass
class Results:
    ratings: list[dict]  # study items' ratings of submitted tasks, with session, arm and judge
    checks: dict[str, gold_module.JudgeCheck]
    agreement: AlphaEstimate | None
    items: int  # study items in the round
    tasks: int
    tasks_submitted: int
    settings: JudgingSettings
    tasks_claimed: int = 0  # claimed by a judge and not submitted (being rated, or walked away from)

    @property
    def kept(self) -> list[dict]:
        return [r for r in self.ratings if r["kept"]]

    @property
    def flagged(self) -> list[str]:
        return sorted(j for j, check in self.checks.items() if check.flagged)

    def per_session(self) -> dict[str, float]:
        """Each session's mean kept score (over its items and their judges)."""
        scores: dict[str, list[int]] = defaultdict(list)
        for rating in self.kept:
            scores[rating["session_id"]].append(rating["score"])
        return {session: statistics.fmean(values) for session, values in scores.items()}


def collect(connection: Connection, study: Study, settings: JudgingSettings) -> Results:
    rows = connection.execute(
        select(
            judging_ratings.c.item_id, judging_ratings.c.score, judging_tasks.c.judge,
            judging_items.c.session_id, judging_items.c.unit, judging_items.c.position,
            judging_items.c.text, judging_items.c.gold_score, sessions.c.condition,
            sessions.c.paradigm.label("stored_paradigm"),
        )
        .join(judging_tasks, judging_tasks.c.task_id == judging_ratings.c.task_id)
        .join(judging_items, judging_items.c.item_id == judging_ratings.c.item_id)
        .join(sessions, sessions.c.session_id == judging_items.c.session_id, isouter=True)
        .where(judging_tasks.c.submitted_at.is_not(None))
        .order_by(judging_items.c.session_id, judging_items.c.position, judging_tasks.c.judge)
    ).mappings().all()  # fmt: skip
    checks = gold_module.check_judges(
        ((r["judge"], r["score"], r["gold_score"]) for r in rows if r["gold_score"] is not None),
        tolerance=settings.gold_tolerance, min_correct=settings.gold_min_correct,
    )  # fmt: skip
    # The paradigm each session ran with, which study.toml may have changed under the arm's name
    # since (study.export.as_run); a session from before it was stored: its arm's now.
    arms = {c.name: c.paradigm for c in study.conditions}
    # A writer or judge who withdrew (study.store.withdrawals) leaves the results: the ratings of
    # their texts, and the ratings they gave (their gold answers still tell of their care).
    gone_sessions, gone_judges = withdrawn_session_ids(connection), withdrawn_ids(connection)
    ratings = []
    for row in rows:
        if row["gold_score"] is not None or row["session_id"] in gone_sessions or row["judge"] in gone_judges:
            continue
        flagged = row["judge"] in checks and checks[row["judge"]].flagged
        found = dict(row)
        ran = found.pop("stored_paradigm") or arms.get(row["condition"], "")
        ratings.append({
            **found, "paradigm": ran,
            "judge_flagged": flagged, "kept": not (flagged and settings.exclude_failed_gold),
        })  # fmt: skip
    counts = connection.execute(select(judging_tasks.c.claimed_at, judging_tasks.c.submitted_at)).all()
    items = connection.execute(
        select(judging_items.c.item_id).where(judging_items.c.gold_score.is_(None))
    ).all()  # fmt: skip
    return Results(
        ratings=ratings, checks=checks,
        agreement=agreement_of(ratings, settings),
        items=len(items), tasks=len(counts), tasks_submitted=sum(done is not None for _, done in counts),
        settings=settings, tasks_claimed=sum(got is not None and done is None for got, done in counts),
    )  # fmt: skip


def flagged_left_out(connection: Connection, study: Study) -> int:
    """How many judges the gold check flagged whose ratings the figures leave out: what the
    planned comparisons list as excluded (`study report`, `study preregister verify`); 0 without
    a judging round, or with exclude_failed_gold = false (their ratings kept)."""
    if "judging" not in study.raw:
        return 0
    settings = from_study(study)
    return len(collect(connection, study, settings).flagged) if settings.exclude_failed_gold else 0


def agreement_of(ratings: list[dict], settings: JudgingSettings) -> AlphaEstimate | None:
    """Krippendorff's alpha of the kept ratings among `ratings` (None when none is kept)."""
    kept = [(r["item_id"], r["judge"], r["score"]) for r in ratings if r["kept"]]
    return alpha_with_interval(kept, settings.agreement_level) if kept else None


def judge_names(ratings: list[dict]) -> dict[str, str]:
    """Judges numbered in order of their first rating ("J1", "J2", ...): an export names no
    worker id (a release uses the keyed pseudonyms of study.release.pseudonyms instead)."""
    names: dict[str, str] = {}
    for rating in ratings:
        names.setdefault(rating["judge"], f"J{len(names) + 1}")
    return names


def rubric_record(settings: JudgingSettings) -> dict:
    """The rubric and rules as a release and an export state them (rubric.json)."""
    return {
        "question": settings.question,
        "unit": settings.unit,
        "judges_per_item": settings.k,
        "rubric": [{"score": l.score, "label": l.label, "description": l.description} for l in settings.rubric],
        "gold": {"per_task": settings.gold_per_task, "tolerance": settings.gold_tolerance,
                 "min_correct": settings.gold_min_correct,
                 "flagged_judges_excluded": settings.exclude_failed_gold},
        "agreement": "Krippendorff's alpha, " + settings.agreement_level,
    }  # fmt: skip
