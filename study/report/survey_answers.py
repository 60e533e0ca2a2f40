"""The survey's questions and answers a report shows: from the study database (typed by their
study.toml definition) or from a release's or export's `survey.csv`, which has no definitions:
a file holding every rating and choice item of a shipped instrument (templates/surveys/) is
read as that instrument defines it, so the export of a study that asked it reports what the
study folder reports; other columns are typed by their answers. A question its survey asks of
some arms only (`arms`, study.survey.placement) reads "not asked" in the other arms' figures,
rather than a mean or a count over answers nobody was asked for; a file does not say which arms
were asked, so there such an arm has no answers ("–")."""

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
    kind: str  # scale | choice | multiple | text
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
        questions.append(asked_by(column, item, arms_of[item.id], placement_of[item.id]))
    return questions, {row.pop("session_id"): row for row in rows}


def asked_by(column: str, item, arms: tuple[str, ...] = (), placement: str = "", text: str = "") -> Question:
    """The question of survey.csv's `column`, as survey item `item` (study.survey.questions.Item)
    defines it, headed `text` (default: the item's wording)."""
    if not text:
        # One question for stories and essays alike, as the release's card words it.
        text = item.text.replace("{noun}", "story/essay")
        if "@" in column:
            text += f" (after exchange {column.split('@')[1]})"
    if item.type in ("likert", "slider"):
        return Question(column, text, "scale", points=tuple(item.scale()), arms=arms, group=item.group,
                        placement=placement)  # fmt: skip
    if item.type in ("single", "multiple"):
        # A multiple choice's answer is its options joined with "; " (study.survey.answers.chosen).
        kind = "choice" if item.type == "single" else "multiple"
        return Question(column, text, kind, item.options, arms=arms, placement=placement)
    return Question(column, text, "text", arms=arms, placement=placement)


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
    items = shipped_items(columns)
    questions = []
    for column in columns:
        given = [a[column] for a in answers.values() if a[column] != ""]
        item = items.get(column.split("@")[0])
        if item is not None and _fits(item, given):
            questions.append(asked_by(column, item, text=column))  # a file's questions go by their ids
        else:
            questions.append(infer_question(column, given))
    return questions, answers


def _fits(item, given: list[str]) -> bool:
    """Whether every answer is one the item offers (a file edited by hand, or answers given under
    an instrument's earlier words, are typed by their answers instead)."""
    if item.type in ("likert", "slider"):
        scale = {str(value) for value in item.scale()}
        return all(answer in scale for answer in given)
    if item.type == "single":
        return all(answer in item.options for answer in given)
    return True


def infer_question(column: str, values: Iterable[str]) -> Question:
    """A column no shipped instrument defines has no question type: answers 1-7 only read as a
    7-point scale, answers 1-10 with some above 7 as a 1-10 scale (CollabLLM's ratings, spec B3),
    a few distinct answers each given by more than one session as a choice, anything else as
    free text. A pilot's few free-text answers are few distinct values too: an answer only one
    writer gave may be their own words, which stay out of a report that may be shared."""
    given = [v for v in values if v != ""]
    if given and all(v.isdigit() and 1 <= int(v) <= 10 for v in given):
        top = 7 if all(int(v) <= 7 for v in given) else 10
        return Question(column, column, "scale", points=tuple(range(1, top + 1)))
    distinct = sorted(set(given))
    if given and len(distinct) <= 8 and all(given.count(v) > 1 for v in distinct):
        return Question(column, column, "choice", tuple(distinct))
    return Question(column, column, "text")


def shipped_items(columns: list[str]) -> dict:
    """Question id -> its survey item (study.survey.questions.Item), for each shipped instrument
    whose every rating and choice item has a column (an in-session item's `ID@K`): a study that
    asked the instrument exports them all (its free-text items may be left out, as optional or
    redacted). Some of its ids alone say nothing: CoAuthor's own survey (study.toml's
    [[survey]]) asks `ownership`, `satisfaction` and `reuse` too, ungrouped, which
    coauthor-post-session.toml groups as "overall" beside eight more."""
    present = {column.split("@")[0] for column in columns}
    items = {}
    for survey in _shipped_surveys():
        if {item.id for item in survey.items if item.type in ("likert", "slider", "single")} <= present:
            items.update({item.id: item for item in survey.items if item.id not in items})
    return items


@functools.cache
def _shipped_surveys() -> tuple:
    """The shipped instruments (templates/surveys/), parsed once."""
    import tomllib

    from study.survey.definition import from_mapping, presets

    surveys = []
    for path in presets().values():
        with open(path, "rb") as handle:
            surveys.append(from_mapping(tomllib.load(handle), where=path.name, origin=str(path)))
    return tuple(surveys)
