"""Survey results per item and condition (from the study database or a release's survey.csv).

Scale items: mean with a 95% bootstrap interval per condition and the count of each point (a
slider of more than 11 points, e.g. 0-100: its median and range instead);
choice items: the count of each option per condition (for a multiple choice, of the answers
that ticked it); free-text items: how many answered (the answers themselves stay in the data,
not in a report that may be shared). A condition a question's
survey did not ask (`arms`) reads "not asked", and is left out of the item's plot. Items grouped
in dimensions (an item's `group`, as MindCopilot's PW, US, CU and AD) are then summarised per
dimension and condition (study.report.survey_dimensions). Within subjects an end-of-study
question is asked after the participant's last arm (study.survey.placement): a note says its
answers count under that arm, and that those who stopped earlier were not asked it."""

from __future__ import annotations

import statistics
from collections import Counter
from html import escape

from study.report import plots
from study.report.data import ReportData
from study.report.survey_answers import NOT_ASKED, Question
from study.report.survey_dimensions import dimensions
from study.report.html import Section, cell
from study.report.intervals import bootstrap_mean
from study.survey.answers import chosen


END_OF_STUDY_WITHIN = (
    "Asked once per participant, after their last arm (end of study): its answers count under "
    "the arm of that last session; a participant who stopped before their last arm was not asked it."
)
# A likert scale has at most 11 points (schemas/survey.schema.json); a wider slider is summarised.
MOST_POINTS = 11
MULTIPLE = "Several options may be ticked: each column counts the answers that ticked it."


def build(data: ReportData) -> Section | None:
    if not data.questions or not data.answers:
        return None
    section = Section("survey", "Survey results")
    condition_of = data.condition_of()  # chat conversations too
    conditions = data.conditions()
    numeric: dict[str, dict[str, list[int]]] = {c: {} for c in conditions}
    for question in data.questions:
        section.add(f"<h3>{escape(question.text)}</h3>")
        if question.placement == "end_of_study" and data.design == "within":
            # Its counts are of participants who wrote every arm, under whichever arm came last.
            section.paragraph(END_OF_STUDY_WITHIN, note=True)
        by_condition = {c: [] for c in conditions}
        for session_id, answers in data.answers.items():
            condition = condition_of.get(session_id)
            value = answers.get(question.id)
            if condition is not None and value not in (None, ""):
                by_condition[condition].append(value)
        _item(section, question, by_condition)
        if question.kind == "scale":
            for condition, values in by_condition.items():
                numeric[condition][question.id] = numbers_of(values)
    _dimensions(section, data.questions, numeric)
    return section


def _dimensions(section: Section, questions: list[Question], numeric: dict[str, dict[str, list[int]]]) -> None:
    rows = dimensions(questions, numeric)
    if not rows:
        return
    section.add("<h3>Questionnaire dimensions</h3>")
    section.paragraph(
        "Per condition, each dimension's items (a survey item's group): the mean of the item means "
        "(as MindCopilot's Table 13 gives PW, US, CU and AD), and the shares of all its answers "
        "above, at and below the scale's midpoint (favourable, neutral, unfavourable; on a 1-7 "
        "scale 5-7, 4 and 1-3: Fig. 6's diverging bars). Higher is favourable on every item.",
        note=True,
    )
    section.table(
        ["condition", "dimension", "items", "mean", "% favourable", "% neutral", "% unfavourable"],
        [[d.condition, d.group, d.items, d.mean, *(cell(share, 1) for share in (d.favourable, d.neutral, d.unfavourable))]
         for d in rows],
    )  # fmt: skip


def _item(section: Section, question: Question, by_condition: dict[str, list]) -> None:
    # An arm its survey did not ask has no answers to count: 0 answers, or a 0 per point, would
    # read as an arm that was asked and said nothing. Its row says so, in the conditions' order.
    unasked = [c for c in by_condition if not question.asked_of(c)]
    asked = {c: v for c, v in by_condition.items() if c not in unasked}

    def rows(figures, blanks: int) -> list[list]:
        return [[c, NOT_ASKED, *[""] * blanks] if c in unasked else [c, *figures(asked[c])] for c in by_condition]

    if question.kind == "scale" and len(question.points) > MOST_POINTS:
        _wide_scale(section, question, asked, rows, unasked)
    elif question.kind == "scale":
        points = [str(p) for p in question.points]
        numbers = {c: numbers_of(values) for c, values in asked.items()}

        def scale_row(values: list) -> tuple:
            given = numbers_of(values)
            counted = Counter(given)
            return (len(given), bootstrap_mean(given), *(counted[int(p)] for p in points))

        section.table(["condition", "answers", "mean [95% CI]", *points], rows(scale_row, len(points) + 1))
        section.figure(
            plots.grouped_bars(points, {c: [Counter(v)[int(p)] for p in points]
                                        for c, v in numbers.items()}, ylabel="answers"),
            f"{question.id}: answers per point of the {len(points)}-point scale, by condition"
            + (f" (not asked in {', '.join(unasked)})." if unasked else "."),
        )  # fmt: skip
    elif question.kind == "choice":
        # Answers under words today's options no longer have (an option reworded mid-study, or
        # a shipped instrument reworded by an upgrade) keep a column of their own, as given.
        given = {str(v) for vs in asked.values() for v in vs}
        options = list(question.options) + sorted(given - set(question.options))
        section.table(["condition", "answers", *options],
                      rows(lambda v: (len(v), *(Counter(map(str, v))[o] for o in options)), len(options)))  # fmt: skip
    elif question.kind == "multiple":
        # Each option counts the sessions that ticked it; an answer's old words keep their own.
        given = {o for vs in asked.values() for v in vs for o in chosen(str(v), question.options)}
        options = list(question.options) + sorted(given - set(question.options))

        def ticked_row(values: list) -> tuple:
            picked = [chosen(str(v), question.options) for v in values]
            return (len(picked), *(sum(o in p for p in picked) for o in options))

        section.table(["condition", "answers", *options], rows(ticked_row, len(options)))
        section.paragraph(MULTIPLE, note=True)
    else:
        section.table(["condition", "answered"], rows(lambda v: (len(v),), 0))


def _wide_scale(section: Section, question: Question, asked: dict[str, list], rows, unasked: list[str]) -> None:
    """A scale of more points than a table or a bar per point can show (a 0-100 slider)."""

    def summary_row(values: list) -> tuple:
        given = numbers_of(values)
        if not given:
            return (0, bootstrap_mean(given), None, None, None)
        return (len(given), bootstrap_mean(given), float(statistics.median(given)), min(given), max(given))

    section.table(["condition", "answers", "mean [95% CI]", "median", "lowest", "highest"], rows(summary_row, 5))
    section.figure(
        plots.boxes({c: numbers_of(v) for c, v in asked.items()}, ylabel=question.id),
        f"{question.id}: answers on the {question.points[0]}-{question.points[-1]} scale, by condition"
        + (f" (not asked in {', '.join(unasked)})." if unasked else "."),
    )


def numbers_of(values: list) -> list[int]:
    return [int(v) for v in values if str(v).lstrip("-").isdigit()]
