"""Time per stage of the participant's path (study database) or writing time (the logs)."""

from __future__ import annotations

import statistics

from study.report import plots
from study.report.data import ReportData
from study.report.html import Section


def build(data: ReportData) -> Section:
    section = Section("timing", "Time per stage")
    if data.stage_seconds is not None:
        minutes = {stage: [s / 60 for s in values] for stage, values in data.stage_seconds.items()}
        section.paragraph("From the timestamps the study database keeps for each session.", note=True)
    else:
        minutes = {"writing (first to last event)": [s.stats["time"] for s in data.sessions]}
        section.paragraph(
            "A release has no stage timestamps; writing time is the span of each log's events "
            "(the metadata's `time`).",
            note=True,
        )
    # A pilot's sessions last seconds; a real study's, minutes.
    longest = max((v for values in minutes.values() for v in values), default=0)
    unit = "min"
    if longest < 2:
        minutes = {stage: [v * 60 for v in values] for stage, values in minutes.items()}
        unit = "s"
    rows = [
        [stage, len(values), statistics.median(values) if values else None,
         min(values) if values else None, max(values) if values else None]
        for stage, values in minutes.items()
    ]  # fmt: skip
    section.table(["stage", "sessions", f"median ({unit})", "min", "max"], rows)
    if any(minutes.values()):
        section.figure(plots.boxes(minutes, ylabel=unit), f"Time per stage, per session ({unit}).")
    return section
