"""Survey results per item and condition (from the study database or a release's survey.csv).

7-point items: mean with a 95% bootstrap interval per condition and the count of each point;
choice items: the count of each option per condition; free-text items: how many answered (the
answers themselves stay in the data, not in a report that may be shared)."""

from __future__ import annotations

from collections import Counter
from html import escape

from study.report import plots
from study.report.data import ReportData
from study.report.survey_answers import Question
from study.report.html import Section
from study.report.intervals import bootstrap_mean


def build(data: ReportData) -> Section | None:
    if not data.questions or not data.answers:
        return None
    section = Section("survey", "Survey results")
    condition_of = data.condition_of()  # chat conversations too
    conditions = data.conditions()
    for question in data.questions:
        section.add(f"<h3>{escape(question.text)}</h3>")
        by_condition = {c: [] for c in conditions}
        for session_id, answers in data.answers.items():
            condition = condition_of.get(session_id)
            value = answers.get(question.id)
            if condition is not None and value not in (None, ""):
                by_condition[condition].append(value)
        _item(section, question, by_condition)
    return section


def _item(section: Section, question: Question, by_condition: dict[str, list]) -> None:
    if question.kind == "scale":
        points = [str(p) for p in question.points]
        numbers = {c: [int(v) for v in values if str(v).lstrip("-").isdigit()] for c, values in by_condition.items()}
        section.table(
            ["condition", "answers", "mean [95% CI]", *points],
            [[c, len(v), bootstrap_mean(v), *(Counter(v)[int(p)] for p in points)]
             for c, v in numbers.items()],
        )  # fmt: skip
        section.figure(
            plots.grouped_bars(points, {c: [Counter(v)[int(p)] for p in points]
                                        for c, v in numbers.items()}, ylabel="answers"),
            f"{question.id}: answers per point of the {len(points)}-point scale, by condition.",
        )  # fmt: skip
    elif question.kind == "choice":
        options = list(question.options) or sorted({str(v) for vs in by_condition.values() for v in vs})
        section.table(
            ["condition", "answers", *options],
            [[c, len(v), *(Counter(map(str, v))[o] for o in options)] for c, v in by_condition.items()],
        )  # fmt: skip
    else:
        section.table(["condition", "answered"], [[c, len(v)] for c, v in by_condition.items()])
