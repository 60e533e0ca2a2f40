"""What a survey definition must satisfy beyond its schema: unique survey names and question
ids, pages numbered without a gap, a cadence for an in-session survey, options for a choice,
slider bands inside the range, a show-if reading an earlier question and an answer it can
take, a survey the study's path would ever ask, and arms (`arms`) the study has and knows when
the survey is asked. Each problem is one line naming the file,
the key and the fix (study.survey.definition gathers them into one SurveyError).
"""

from __future__ import annotations

import json
from pathlib import Path

from study.survey.questions import LEGACY_NAME, Item, Survey


def beyond_schema(surveys: list[Survey], source: Path) -> list[str]:
    """Every problem of the study's surveys that their schema cannot see."""
    problems = []
    names: set[str] = set()
    ids: dict[str, str] = {}
    for s in surveys:
        where = f"surveys.{s.name}"
        if s.name in names:
            problems.append(f"{source}: {where}: the name is used twice. Fix: give each survey its own name.")
        names.add(s.name)
        if s.placement == "in_session" and not s.every:
            problems.append(
                f"{source}: {where}.every: an in_session survey needs a cadence. "
                "Fix: add every = 3 (ask after every third exchange)."
            )
        pages = sorted({item.page for item in s.items})
        if pages != list(range(1, len(pages) + 1)):
            problems.append(
                f"{source}: {where}: pages {pages} leave a gap. Fix: number pages 1, 2, 3 ... in order."
            )
        seen: list[Item] = []
        for item in s.items:
            at = f"{where}.items.{item.id}"
            if item.id in ids and ids[item.id] == LEGACY_NAME:
                # study init writes the [[survey]] list, whose ids a shipped instrument's meet
                # (coauthor-post-session's ownership, satisfaction, reuse); a preset's are fixed.
                other = "" if "preset" in s.raw else ", or give this question another id"
                problems.append(
                    f"{source}: {at}: id '{item.id}' is also a question of study.toml's [[survey]] list. "
                    f'Fix: remove the [[survey]] table with id = "{item.id}" (or the whole list, if this '
                    f"survey replaces it){other}."
                )
            elif item.id in ids:
                problems.append(
                    f"{source}: {at}: id '{item.id}' is also used in survey '{ids[item.id]}'. "
                    "Fix: give every question of the study its own id."
                )
            ids[item.id] = s.name
            problems += [f"{source}: {at}{p}" for p in _item_problems(item, seen)]
            seen.append(item)
    return problems


def never_asked(surveys: tuple[Survey, ...], paradigm: str, source: Path) -> list[str]:
    """Surveys a study whose sessions take `paradigm`'s path ("writing", or a paradigm's own
    such as "chat") would never ask: it would run to its end with no page, answer or column."""
    problems = []
    for s in surveys:
        where = f"{source}: surveys.{s.name}"
        if not s.asks_in(paradigm):
            problems.append(
                f"{where}.paradigms: {json.dumps(list(s.paradigms))} leaves out this {paradigm} study, "
                f'which would never ask the survey. Fix: add "{paradigm}" to paradigms, or remove the survey.'
            )
        elif s.placement == "in_session" and paradigm == "writing":
            problems.append(
                f'{where}.placement: "in_session" surveys are asked between a chat study\'s exchanges '
                "(a [chat] table); this writing study would never ask it. Fix: set placement = "
                '"after_session" (or "before_writing", "end_of_study").'
            )
    return problems


def arm_problems(surveys: tuple[Survey, ...], arms: list[str], source: Path) -> list[str]:
    """What is wrong with the `arms` of the study's `[[surveys]]` tables, given the study's arms
    (its [[conditions]] names, in order): an arm it does not have, an empty list (a survey no
    session is asked), or a before_writing survey, asked before the session is given its arm (at
    the prompt; a chat study's at the intent), so no rule could tell whom to ask."""
    problems = []
    known = ", ".join(arms)
    # The [[surveys]] tables in order, as surveys[N] numbers them (the [[survey]] list has no raw).
    for index, s in enumerate(s for s in surveys if s.raw):
        if "arms" not in s.raw:
            continue
        where = f"{source}: surveys[{index}].arms"
        if not s.arms:
            problems.append(
                f"{where}: an empty list asks survey '{s.name}' in no arm, so it would never be asked. "
                f"Fix: name the arms to ask it in (this study's: {known}), or remove arms to ask every arm."
            )
        for k, arm in enumerate(s.arms):
            if arm not in arms:
                problems.append(
                    f"{where}[{k}]: this study has no arm named '{arm}' (its arms, the [[conditions]] "
                    f"names: {known}). Fix: write one of those names as study.toml spells it, or remove it."
                )
        if s.arms and s.placement == "before_writing":
            problems.append(
                f'{where}: a "before_writing" survey is asked before the session is given its arm, so it '
                "cannot be limited to arms. Fix: remove arms (ask it in every arm), or set placement = "
                '"after_session" to ask it of these arms after their session.'
            )
    return problems


def _item_problems(item: Item, earlier: list[Item]) -> list[str]:
    problems = []
    if item.type in ("single", "multiple") and len(item.options) < 2:
        problems.append(f".options: a \"{item.type}\" question needs options. Fix: add options = [\"...\", \"...\"].")
    if item.type == "likert" and item.labels and len(item.labels) != item.points:
        problems.append(
            f".labels: {len(item.labels)} labels for {item.points} points. "
            f"Fix: give one label per point or set points = {len(item.labels)}."
        )
    if item.type == "slider":
        if item.min >= item.max:
            problems.append(f".max: must be above min ({item.min}). Fix: e.g. min = 1, max = 10.")
        for band in item.bands:
            if not item.min <= band.start <= band.end <= item.max:
                problems.append(
                    f".bands: '{band.label}' ({band.start}-{band.end}) is outside {item.min}-{item.max}. "
                    "Fix: keep from <= to inside the slider's range."
                )
    if item.type == "multiple" and item.max_choices and item.max_choices < item.min_choices:
        problems.append(".max_choices: is below min_choices. Fix: raise max_choices.")
    # A question no answer satisfies holds the participant at the survey, short of their code.
    if item.type == "multiple" and item.min_choices > len(item.options):
        problems.append(
            f".min_choices: {item.min_choices} of {len(item.options)} options can never be ticked. "
            f"Fix: set min_choices to at most {len(item.options)} or add options."
        )
    if item.type == "text" and item.min_words and 2 * item.min_words - 1 > item.max_chars:
        # The shortest text of n words is n one-letter words and the n - 1 spaces between them.
        problems.append(
            f".min_words: {item.min_words} words do not fit in max_chars = {item.max_chars} (the text "
            f"box stops taking characters there). Fix: raise max_chars or lower min_words."
        )
    if item.show_if is not None:
        target = next((e for e in earlier if e.id == item.show_if.item), None)
        if target is None:
            problems.append(
                f".show_if.item: '{item.show_if.item}' is not an earlier question of this survey. "
                "Fix: name a question listed above this one."
            )
        elif item.page < target.page:
            problems.append(".page: a question cannot come before the question its show_if reads. Fix: move it.")
        elif target.type not in ("likert", "slider") and (
            item.show_if.at_least is not None or item.show_if.at_most is not None
        ):
            # The page reads an option "3" as 3 and shows the question; the server compares only
            # numbers (answers.visible) and would drop the answer given to it.
            key = "at_least" if item.show_if.at_least is not None else "at_most"
            problems.append(
                f".show_if.{key}: '{target.id}' is a \"{target.type}\" question, whose answer is not a "
                "number. Fix: list the answers that show this question, in = [...]."
            )
        if target is not None and (answers := _answers_of(target)):
            # The page and the server compare answers as text (answers.visible): a value the
            # question does not offer ("yes" for "Yes", 3.0 for 3) never shows the follow-up.
            rule = item.show_if
            for key, values in (("equals", () if rule.equals is None else (rule.equals,)), ("in", rule.any_of)):
                for value in values:
                    if str(value) not in answers:
                        problems.append(
                            f".show_if.{key}: {value!r} is not an answer of '{target.id}', so no participant "
                            f"is shown this question on it. Fix: use one of {answers}, written as there."
                        )
    return problems


def _answers_of(item: Item) -> list[str]:
    """The answers a choice or scale question may take, as the page posts them ([] for text)."""
    if item.type in ("single", "multiple"):
        return list(item.options)
    return [str(value) for value in item.scale()]

