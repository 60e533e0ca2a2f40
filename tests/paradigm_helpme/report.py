"""The helpme paradigm's section of `study report`: help asked and unanswered per condition."""

from __future__ import annotations

from study import config as study_config
from study.report.data import STUDY, ReportData
from study.report.sections.plugins import metrics_section
from tests.paradigm_helpme import NAME

TITLE = "Help me"


def load(data: ReportData) -> None:
    if data.kind != STUDY:
        return
    ours = {c.name for c in study_config.load(data.path).conditions if c.paradigm == NAME}
    sessions = {s.session_id: {"help asked": s.queries, "help unanswered": s.unanswered}
                for s in data.sessions if s.condition in ours}  # fmt: skip
    if sessions:
        data.extras[NAME] = {"title": TITLE, "note": 'Presses of "Help me", and those the model did not answer.',
                             "sessions": sessions}  # fmt: skip


build = metrics_section(NAME, TITLE)
