"""Acceptance, writer share, equality and mutuality per condition, with 95% intervals.

Acceptance is the per-session `perc_selected` (suggestion-select / suggestion-open, the
release's definition; 0 for a session without a query), averaged over all sessions as Table 3
does (`study curate stats`); writer share is Table 3's "written by writers (%)" (the writer's share of the
final text, prompt excluded); equality and mutuality are section 5.1.3's scores over event
blocks (`study.curation.metrics`, the paper's printed sets). Intervals: `study.report.intervals`.
"""

from __future__ import annotations

from study.paradigms.none.arm import NOT_APPLICABLE
from study.report import plots
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import RESAMPLES, bootstrap_mean

MEASURES = (
    ("acceptance (%)", "perc_selected", "Acceptance rate: suggestions accepted per list shown (%)."),
    ("written by writers (%)", "writer_share_final", "Writer's share of the final text (%)."),
    ("equality", "equality", "Equality (section 5.1.3): how evenly turns were shared, 0-1."),
    ("mutuality", "mutuality", "Mutuality (section 5.1.3): how much the writer interacted, 0-1."),
)


def _values(sessions, column: str) -> list:
    return [s.stats.get(column) for s in sessions]


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("collaboration", "Acceptance, writer share, equality and mutuality")
    section.paragraph(
        "Means per condition with 95% confidence intervals in brackets: the percentile "
        f"bootstrap over sessions ({RESAMPLES} resamples, fixed seed). No interval is given for "
        "fewer than 3 sessions. Acceptance counts a session without a query as 0, as the "
        "paper's Table 3 does, and is not applicable to a control arm (no assistant).",
        note=True,
    )
    groups = {c: [s for s in data.sessions if s.condition == c] for c in data.conditions()}
    groups["all"] = data.sessions
    estimates = {
        (name, column): bootstrap_mean(_values(members, column))
        for name, members in groups.items() for _, column, _ in MEASURES
    }  # fmt: skip
    for name in data.control_conditions():
        # No assistant, so no list to accept from: "not applicable", where 0 would read as refusal.
        estimates[(name, "perc_selected")] = NOT_APPLICABLE
    section.table(
        ["condition", "sessions", *(heading for heading, _, _ in MEASURES)],
        [[name, len(members), *(estimates[(name, column)] for _, column, _ in MEASURES)]
         for name, members in groups.items()],
    )  # fmt: skip
    for heading, column, caption in MEASURES:
        rows = [(name, estimates[(name, column)]) for name in groups
                if estimates[(name, column)] != NOT_APPLICABLE]
        if any(e.n for _, e in rows):
            section.figure(plots.intervals(rows, xlabel=heading), caption + " Mean and 95% CI.")
    return section
