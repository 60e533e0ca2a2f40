"""The report's sections, in the order they appear.

A section is a function `build(data: ReportData) -> Section | None`: it returns None when the
data has nothing for it (a release has no funnel, a study without a survey no survey results),
and the report leaves it out. Adding a metric to the report is adding a module here and a line
to SECTIONS: the chat study (CollabLLM) and proactive co-writing (MindCopilot L0-L3) put their
per-session figures in `data.extras["chat"]` / `data.extras["proactive"]`
through a loader in `study.report.data.EXTRA_LOADERS`, and get a section each
(`plugins.metrics_section`: means per condition with bootstrap intervals); their own loaders
(study.report.chat, study.paradigms.proactive.report) fill richer sections (sections/chat.py,
sections/proactive.py).
"""

from __future__ import annotations

from study.report.sections import (
    allocation,
    arms,
    chat,
    collaboration,
    ideation,
    judging,
    language,
    origin,
    overview,
    participation,
    plan,
    proactive,
    suggestions,
    survey,
    table3,
    timing,
    variation,
)

SECTIONS = (
    plan.build,  # planned comparisons first, then what was explored (issue 27)
    overview.build,
    table3.build,
    participation.build,
    timing.build,
    allocation.build,
    suggestions.build,
    collaboration.build,
    origin.build,
    variation.build,
    language.build,
    ideation.build,
    chat.build,
    proactive.build,
    judging.build,
    survey.build,
    arms.build,
)
