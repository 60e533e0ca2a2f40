"""Sessions per condition and prompt: whether the assignment kept the design balanced."""

from __future__ import annotations

from collections import Counter

from study.report import plots
from study.report.data import ReportData
from study.report.html import Section


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("allocation", "Sessions per condition and prompt")
    conditions = data.conditions()
    cells = Counter((s.prompt_code, s.condition) for s in data.sessions)
    prompts = sorted({s.prompt_code for s in data.sessions})
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
