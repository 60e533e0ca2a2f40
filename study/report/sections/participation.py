"""The participation funnel: how many sessions reached each step of the participant's path."""

from __future__ import annotations

from study.report import plots
from study.report.data import ReportData
from study.report.html import Section


def build(data: ReportData) -> Section | None:
    section = Section("participation", "Participation funnel")
    if data.funnel is None:
        section.paragraph(
            "Not available: a release or session folder holds finished sessions only. Run the "
            "report on the study folder for who entered, consented, wrote, finished and was "
            "approved.",
            note=True,
        )
        return section
    entered = data.funnel[0][1] or 0
    rows = []
    for label, count in data.funnel:
        share = (100 * count / entered) if (count is not None and entered) else None
        rows.append([label, "–" if count is None else count,
                     "–" if share is None else f"{share:.0f}%"])  # fmt: skip
    section.table(["step", "sessions", "of entered"], rows)
    shown = [(label, count) for label, count in data.funnel if count is not None]
    section.figure(
        plots.bars([label for label, _ in shown], [count for _, count in shown], xlabel="sessions"),
        "Sessions that reached each step.",
    )
    if data.funnel[-1][1] is None:
        section.paragraph(
            "Approved: no MTurk assignment is linked to these sessions (a lab study, or the "
            "assignments have not been synced with `study mturk review`).",
            note=True,
        )
    return section
