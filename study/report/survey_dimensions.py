"""Questionnaire dimensions: a survey's scale items grouped (an item's `group` in its survey
definition) and summarised per condition, as MindCopilot reports its post-task questionnaire
(App. F, Tab. 13, Fig. 6; spec A3.4).

- mean: the mean of the dimension's item means (Tab. 13's PW, US, CU and AD are the means of
  Q1-Q4, Q5-Q6, Q7-Q8 and Q9-Q10; with every item answered by the same writers this is also the
  mean of the writers' dimension scores);
- favourable, neutral, unfavourable: the shares of all the dimension's answers above, at and
  below the scale's midpoint (on MindCopilot's 1-7 valence scale: 5-7, 4 and 1-3), Fig. 6's
  diverging bars. Higher is favourable for every item, the workload items included: the scale
  runs from Very Bad to Very Good, not from Low to High.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.report.survey_answers import Question


@dataclass(frozen=True)
class Dimension:
    condition: str
    group: str
    items: int
    answers: int
    mean: float  # NaN when no item has an answer
    favourable: float  # percent of the answers
    neutral: float
    unfavourable: float


def dimensions(questions: Sequence[Question], by_condition: Mapping[str, Mapping[str, list[int]]]) -> list[Dimension]:
    """`by_condition`: condition -> question id -> the numeric answers given in that condition.
    One Dimension per condition and group, in the questions' order of groups; a condition a
    group's questions were not asked of is left out."""
    groups: dict[str, list[Question]] = {}
    for question in questions:
        if question.kind == "scale" and question.group:
            groups.setdefault(question.group, []).append(question)
    out = []
    for condition, answers in by_condition.items():
        for group, members in groups.items():
            asked = [q for q in members if q.asked_of(condition)]
            if not asked:
                continue
            item_means, counts = [], [0, 0, 0]
            for question in asked:
                values = answers.get(question.id, [])
                if values:
                    item_means.append(sum(values) / len(values))
                middle = (question.points[0] + question.points[-1]) / 2
                for value in values:
                    counts[0 if value > middle else 1 if value == middle else 2] += 1
            total = sum(counts)
            shares = [100 * c / total if total else math.nan for c in counts]
            mean = sum(item_means) / len(item_means) if item_means else math.nan
            out.append(Dimension(condition, group, len(asked), total, mean, *shares))
    return out
