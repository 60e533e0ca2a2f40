"""The report's judging loader (study.report.data.EXTRA_LOADERS): a judging round's results,
from the study database (a study folder) or the files a release carries (judging/)."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from study import config as study_config
from study.report.data import RELEASE, STUDY, ReportData

RELEASE_FOLDER = "judging"


@dataclass
class JudgingFigures:
    per_session: dict[str, float]  # session -> mean kept score
    alpha: float
    low: float
    high: float
    items: int
    ratings_kept: int
    judges: int
    flagged: int
    level: str
    question: str
    rubric: list[dict] = field(default_factory=list)
    # [judging] exclude_failed_gold: whether the flagged judges' ratings are left out of the
    # figures, or kept in them and only marked.
    flagged_excluded: bool = True


def load(data: ReportData) -> None:
    if data.kind == STUDY:
        figures = _from_study(data.path)
    elif data.kind == RELEASE:
        figures = _from_release(data.path / RELEASE_FOLDER)
    else:
        figures = None
    if figures is not None:
        data.extras["judging"] = figures


def _from_study(path: Path) -> JudgingFigures | None:
    if "judging" not in study_config.load(path).raw:
        return None
    from study.judging import results
    from study.judging import settings as judging_settings
    from study.store import create_tables, make_engine, reading

    study = study_config.load(path)
    settings = judging_settings.from_study(study)
    engine = make_engine(study.database_url)
    create_tables(engine)
    with reading(engine) as connection:
        found = results.collect(connection, study, settings)
    engine.dispose()
    if not found.ratings:
        return None
    a = found.agreement
    rubric = results.rubric_record(settings)
    return JudgingFigures(
        found.per_session(), a.alpha if a else math.nan, a.low if a else math.nan, a.high if a else math.nan,
        # The judges as `study judging status` and judging_judges.csv count them.
        a.items if a else 0, len(found.kept), len({r["judge"] for r in found.ratings} | set(found.checks)),
        len(found.flagged),
        settings.agreement_level, settings.question, rubric["rubric"], settings.exclude_failed_gold,
    )  # fmt: skip


def _from_release(folder: Path) -> JudgingFigures | None:
    sessions, rubric = folder / "judging_sessions.csv", folder / "judging_rubric.json"
    if not sessions.is_file() or not rubric.is_file():
        return None
    record = json.loads(rubric.read_text(encoding="utf-8"))
    with sessions.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with (folder / "judging_judges.csv").open(encoding="utf-8") as handle:
        judges = list(csv.DictReader(handle))
    result = record.get("agreement_result") or {}

    def number(key):
        return math.nan if result.get(key) is None else result[key]

    return JudgingFigures(
        {r["session_id"]: float(r["mean_score"]) for r in rows if r["mean_score"]},
        number("alpha"), number("low"), number("high"), result.get("items", 0),
        sum(int(r["ratings"]) for r in rows), len(judges), sum(j["flagged"] == "true" for j in judges),
        record["agreement"].rsplit(", ", 1)[-1], record["question"], record["rubric"],
        record.get("gold", {}).get("flagged_judges_excluded", True),
    )  # fmt: skip
