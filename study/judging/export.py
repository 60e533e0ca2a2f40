"""The round's files, as `study judging export` and `study export` write them and
`study release build` carries them (with keyed pseudonyms for judges there):

  judging_ratings.csv   one row per rating of a study item: its session, arm (condition and
                        paradigm), unit, sentence position, judge, score, and whether it is kept;
  judging_sessions.csv  one row per judged session: items, kept ratings, mean kept score;
  judging_judges.csv    one row per judge: gold rated, gold right, flagged;
  judging_rubric.json   the question, rubric and rules, and the agreement (Krippendorff's alpha
                        with its 95% bootstrap interval).
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from study.judging.results import RATING_COLUMNS, Results, judge_names, rubric_record

RATINGS_CSV, SESSIONS_CSV, JUDGES_CSV, RUBRIC_JSON = (
    "judging_ratings.csv", "judging_sessions.csv", "judging_judges.csv", "judging_rubric.json",
)  # fmt: skip
SESSION_COLUMNS = ("session_id", "condition", "paradigm", "items", "ratings", "mean_score")
JUDGE_COLUMNS = ("judge", "gold_rated", "gold_correct", "flagged")


def _write(path: Path, columns, rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def write(results: Results, out: Path, *, judge_name: Callable[[str], str] | None = None,
          session_name: Callable[[str], str] | None = None, with_text: bool = True) -> int:  # fmt: skip
    """Write the four files into `out`; returns the number of ratings written. `judge_name` and
    `session_name` rename judges and sessions (a release's pseudonyms); by default judges are
    J1, J2, ... and sessions keep their ids."""
    out.mkdir(parents=True, exist_ok=True)
    numbered = judge_names(results.ratings + [{"judge": j} for j in sorted(results.checks)])
    name = judge_name or numbered.__getitem__
    session = session_name or (lambda s: s)
    rows = [{**r, "judge": name(r["judge"]), "session_id": session(r["session_id"]),
             "text": r["text"] if with_text else "", "judge_flagged": str(r["judge_flagged"]).lower(),
             "kept": str(r["kept"]).lower()} for r in results.ratings]  # fmt: skip
    _write(out / RATINGS_CSV, RATING_COLUMNS, rows)
    by_session: dict[str, list[dict]] = defaultdict(list)
    for rating in results.ratings:
        by_session[rating["session_id"]].append(rating)
    means = results.per_session()
    _write(out / SESSIONS_CSV, SESSION_COLUMNS, [
        {"session_id": session(s), "condition": rs[0]["condition"], "paradigm": rs[0]["paradigm"],
         "items": len({r["item_id"] for r in rs}), "ratings": sum(r["kept"] for r in rs),
         "mean_score": f"{means[s]:.4f}" if s in means else ""}
        for s, rs in sorted(by_session.items(), key=lambda pair: session(pair[0]))
    ])  # fmt: skip
    # Every judge of the round, not only those the gold check saw: without gold items it saw
    # none, and a release's report counts the round's judges here.
    checks = results.checks
    _write(out / JUDGES_CSV, JUDGE_COLUMNS, sorted(
        ({"judge": name(j), "gold_rated": checks[j].gold_rated if j in checks else 0,
          "gold_correct": checks[j].gold_correct if j in checks else 0,
          "flagged": str(j in checks and checks[j].flagged).lower()} for j in numbered),
        key=lambda row: row["judge"]))  # fmt: skip
    record = rubric_record(results.settings)
    a = results.agreement
    record["agreement_result"] = None if a is None else {
        "alpha": _number(a.alpha), "low": _number(a.low), "high": _number(a.high),
        "items": a.items, "ratings": a.ratings, "interval": "95% bootstrap over items",
    }  # fmt: skip
    record["flagged_judges"] = len(results.flagged)
    (out / RUBRIC_JSON).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return len(rows)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)
