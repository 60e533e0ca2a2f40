"""The survey's questions and answers a report shows: from the study database (typed by their
study.toml definition) or from a release's or export's `survey.csv` (types inferred from the
answers, which is all such a file has). A question its survey asks of some arms only (`arms`,
study.survey.placement) reads "not asked" in the other arms' figures, rather than a mean or a
count over answers nobody was asked for; a file does not say which arms were asked, so there
such an arm has no answers ("–")."""

from __future__ import annotations

import csv
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from study.report.errors import ReportSourceError


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    kind: str  # scale | choice | text
    options: tuple[str, ...] = ()
    points: tuple[int, ...] = tuple(range(1, 8))  # the values of a scale (likert or slider)
    arms: tuple[str, ...] = ()  # the arms its survey asks; empty: every arm (or not known)
    group: str = ""  # the dimension it belongs to (its survey item's `group`, e.g. MindCopilot's PW)
    placement: str = ""  # its survey's (study.survey.placement); empty when not known (a file)

    def asked_of(self, arm: str) -> bool:
        return not self.arms or arm in self.arms


NOT_ASKED = "not asked"


def study_survey(study, connection, session_ids: list[str]) -> tuple[list[Question], dict[str, dict[str, object]]]:
    """The survey engine's questions (typed by their study.toml definition) and the answers of
    completed sessions, one column per question as `study export` writes survey.csv (an
    in-session question once per occasion, `ID@K`)."""
    from study.export.surveys import survey_rows
    from study.store import surveys as survey_store

    responses = survey_store.all_responses(connection)
    columns, rows = survey_rows(study, responses, session_ids)
    items = {item.id: item for survey in study.surveys for item in survey.items}
    arms_of = {item.id: survey.arms for survey in study.surveys for item in survey.items}
    placement_of = {item.id: survey.placement for survey in study.surveys for item in survey.items}
    questions = []
    for column in columns:
        item = items[column.split("@")[0]]
        arms, placement = arms_of[item.id], placement_of[item.id]
        # One question for stories and essays alike, as the release's card words it.
        text = item.text.replace("{noun}", "story/essay")
        if "@" in column:
            text += f" (after exchange {column.split('@')[1]})"
        if item.type in ("likert", "slider"):
            questions.append(Question(column, text, "scale", points=tuple(item.scale()), arms=arms,
                                      group=item.group, placement=placement))
        elif item.type == "single":
            questions.append(Question(column, text, "choice", item.options, arms=arms, placement=placement))
        else:  # free text, and multiple choice (its answers are joined with "; ")
            questions.append(Question(column, text, "text", arms=arms, placement=placement))
    return questions, {row.pop("session_id"): row for row in rows}


def read_survey_csv(path: Path) -> tuple[list[Question], dict[str, dict[str, object]]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if "session_id" not in (reader.fieldnames or ()):
                raise ReportSourceError(f"{path}: needs a session_id column")
            columns = [c for c in reader.fieldnames if c != "session_id"]
            answers = {row["session_id"]: {c: row.get(c) or "" for c in columns} for row in reader}
    except UnicodeDecodeError as error:
        # A survey.csv edited in a spreadsheet is often saved in its own encoding (Windows-1252).
        raise ReportSourceError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); "
                                "export the sheet as CSV UTF-8") from None  # fmt: skip
    except csv.Error as error:
        raise ReportSourceError(f"{path}: not readable as CSV ({error})") from None
    return [infer_question(c, (a[c] for a in answers.values())) for c in columns], answers


def infer_question(column: str, values: Iterable[str]) -> Question:
    """A release's survey.csv has no question types: answers 1-7 only read as a 7-point scale,
    answers 1-10 with some above 7 as a 1-10 scale (CollabLLM's ratings, spec B3), a few
    distinct answers each given by more than one session as a choice, anything else as free
    text. A pilot's few free-text answers are few distinct values too: an answer only one
    writer gave may be their own words, which stay out of a report that may be shared."""
    given = [v for v in values if v != ""]
    if given and all(v.isdigit() and 1 <= int(v) <= 10 for v in given):
        top = 7 if all(int(v) <= 7 for v in given) else 10
        group = preset_groups().get(column, "")
        return Question(column, column, "scale", points=tuple(range(1, top + 1)), group=group)
    distinct = sorted(set(given))
    if given and len(distinct) <= 8 and all(given.count(v) > 1 for v in distinct):
        return Question(column, column, "choice", tuple(distinct))
    return Question(column, column, "text")


@functools.cache
def preset_groups() -> dict[str, str]:
    """Question id -> dimension, for the shipped instruments' grouped items (templates/surveys/:
    MindCopilot's q1_mental_demand is PW, ...). A file's columns carry no survey definition, and
    a shipped instrument's ids are what a study using it exports."""
    import tomllib

    from study.survey.definition import from_mapping, presets

    groups = {}
    for path in presets().values():
        with open(path, "rb") as handle:
            survey = from_mapping(tomllib.load(handle), where=path.name, origin=str(path))
        groups.update({item.id: item.group for item in survey.items if item.group})
    return groups
