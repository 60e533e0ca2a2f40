"""The judging round: agreement with its interval, and the judges' mean score per arm."""

from __future__ import annotations

import math

from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import RESAMPLES, bootstrap_mean
from study.review.agreement.interval import RESAMPLES as ALPHA_RESAMPLES


def flagged_sentence(figures) -> str:
    """What became of the judges the gold check flagged: left out, or (exclude_failed_gold =
    false) kept in every figure below, which the reader must be told rather than the opposite."""
    if figures.flagged and not figures.flagged_excluded:
        return (f"{figures.flagged} judge(s) failed the gold items and their ratings are kept in these figures "
                "([judging] exclude_failed_gold = false; marked judge_flagged in judging_ratings.csv).")
    return f"{figures.flagged} judge(s) failed the gold items and their ratings are left out."


def build(data: ReportData) -> Section | None:
    figures = data.extras.get("judging")
    if figures is None:
        return None
    section = Section("judging", "Judging round")
    section.paragraph(f"Judges answered \"{figures.question}\" on the rubric "
                      + ", ".join(f"{level['score']} {level['label']}" for level in figures.rubric)
                      + f". {figures.ratings_kept} ratings kept from {figures.judges} judges; "
                      + flagged_sentence(figures))  # fmt: skip
    if math.isnan(figures.alpha):
        section.paragraph("Krippendorff's alpha: not computable (too few items rated twice, or one score only).")
    else:
        interval = "" if math.isnan(figures.low) else f", 95% interval [{figures.low:.2f}, {figures.high:.2f}]"
        section.paragraph(f"Krippendorff's alpha ({figures.level}): {figures.alpha:.2f}{interval}, "
                          f"over {figures.items} items rated at least twice (Krippendorff 2011; the interval "
                          f"is the percentile bootstrap over items, {ALPHA_RESAMPLES} resamples, fixed seed).")  # fmt: skip
    condition = data.condition_of()
    by_arm: dict[str, list[float]] = {}
    for session_id, mean in figures.per_session.items():
        by_arm.setdefault(condition.get(session_id, "unknown"), []).append(mean)
    section.paragraph("Mean score per condition: each session's mean of its kept ratings, averaged over "
                      f"sessions, with the 95% percentile bootstrap over sessions ({RESAMPLES} resamples, fixed "
                      "seed; none for fewer than 3).", note=True)  # fmt: skip
    section.table(["condition", "sessions", "mean score [95% interval]"],
                  [[arm, len(values), bootstrap_mean(values)] for arm, values in sorted(by_arm.items())])  # fmt: skip
    return section
