"""The report's sections, in the order they appear.

A section is a function `build(data: ReportData) -> Section | None`: it returns None when the
data has nothing for it (a release has no funnel, a study without a survey no survey results),
and the report leaves it out. Adding a metric to the report is adding a module here and a line
to SECTIONS. A paradigm's own section is its folder's (study.paradigms.base: `report`, e.g.
study.paradigms.proactive.report): its `load` puts its per-session figures in
`data.extras[name]` and its `build` draws them, or hands them to `plugins.metrics_section`
(means per condition with bootstrap intervals). The report shows those sections between
SECTIONS and SECTIONS_AFTER_PARADIGMS.
"""

from __future__ import annotations

from study.report.sections import (
    allocation,
    arms,
    collaboration,
    ideation,
    judging,
    language,
    origin,
    overview,
    participation,
    plan,
    suggestions,
    survey,
    table3,
    timing,
    variation,
    within,
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
)
SECTIONS_AFTER_PARADIGMS = (
    judging.build,
    survey.build,
    arms.build,
    within.build,  # a within-subjects study's design and its arms paired
)
