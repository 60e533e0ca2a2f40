"""Sessions per condition and prompt: whether the assignment kept the design balanced.

From a study folder every configured prompt and condition is a row or column, those with no
session too (what a pilot is run to find), and a sentence names them."""

from __future__ import annotations

from collections import Counter

from study.report import plots
from study.report.data import ReportData
from study.report.html import Section


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("allocation", "Sessions per condition and prompt")
    seen_conditions = data.conditions()
    conditions = data.planned_conditions + [c for c in seen_conditions if c not in data.planned_conditions]
    cells = Counter((s.prompt_code, s.condition) for s in data.sessions)
    seen_prompts = sorted({s.prompt_code for s in data.sessions})
    prompts = data.planned_prompts + [p for p in seen_prompts if p not in data.planned_prompts]
    for what, planned, seen in (("condition", conditions, seen_conditions), ("prompt", prompts, seen_prompts)):
        empty = [name for name in planned if name not in seen]
        if empty:
            section.paragraph(f"No session yet for {len(empty)} {what}(s): {', '.join(empty)}.")
    if data.unfinished:
        # `study status` and the balanced rule count a session from its prompt on; this table
        # counts the exported ones, so say which they are, or the two disagree unexplained.
        order = {name: position for position, name in enumerate(conditions)}
        begun = ", ".join(f"{name} {data.unfinished[name]}"
                          for name in sorted(data.unfinished, key=lambda name: order.get(name, len(order))))
        section.paragraph(
            f"The table counts sessions whose writing is finished, as `study export` writes them. "
            f"Sessions begun and not finished are not in it: {sum(data.unfinished.values())} ({begun}). "
            "`study status` counts them, and so did the balanced rule when it gave each new "
            "session its condition.",
            note=True,
        )
    rows = [[p, *(cells[(p, c)] for c in conditions), sum(cells[(p, c)] for c in conditions)]
            for p in prompts]  # fmt: skip
    totals = Counter(s.condition for s in data.sessions)
    rows.append(["all prompts", *(totals[c] for c in conditions), len(data.sessions)])
    section.table(["prompt", *conditions, "all"], rows)
    section.figure(
        plots.bars(conditions, [totals[c] for c in conditions], xlabel="sessions"),
        "Sessions per condition.",
    )
    return section
