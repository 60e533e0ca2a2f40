"""Checking a participant's answers to one page of a survey.

Pure functions: a form (item id -> text, or a list of texts for multiple choice) and the answers
already given on earlier pages in, typed answers and per-question error messages out. Hidden
questions (show_if not met) are neither required nor kept, whatever the browser sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from study.survey.questions import Item, Survey

_WORD = re.compile(r"\S+")


def word_count(text: str) -> int:
    """Words as runs of non-space characters: what a participant counts, in any script that
    uses spaces. (CollabLLM's "longer than 8 words" is min_words = 9.)"""
    return len(_WORD.findall(text))


def visible(item: Item, answers: Mapping[str, object]) -> bool:
    """Whether `item` is shown, given the answers so far (show_if, schemas/survey.schema.json)."""
    rule = item.show_if
    if rule is None:
        return True
    value = answers.get(rule.item)
    if value in (None, "", []):
        return False
    values = value if isinstance(value, list) else [value]
    texts = {str(v) for v in values}
    if rule.equals is not None and str(rule.equals) not in texts:
        return False
    if rule.any_of and not texts & {str(v) for v in rule.any_of}:
        return False
    if rule.at_least is not None or rule.at_most is not None:
        if not isinstance(value, (int, float)):
            return False
        if rule.at_least is not None and value < rule.at_least:
            return False
        if rule.at_most is not None and value > rule.at_most:
            return False
    return True


def check_page(
    survey: Survey, page: int, form: Mapping[str, object], earlier: Mapping[str, object] | None = None
) -> tuple[dict, dict[str, str]]:
    """The answers of `page` (only shown questions) and an error message per question."""
    answers: dict = {}
    errors: dict[str, str] = {}
    known = dict(earlier or {})
    for item in survey.page_items(page):
        # Questions are read in order, so a show_if sees the answers above it on the same page.
        if not visible(item, known):
            continue
        value, error = check_item(item, form.get(item.id))
        if error:
            errors[item.id] = error
        if value not in (None, "", []):
            answers[item.id] = value
            known[item.id] = value
    return answers, errors


def check_item(item: Item, raw: object) -> tuple[object, str | None]:
    """One answer, typed (int for scales, list for multiple choice, str otherwise), and the
    message to show when it is not acceptable."""
    if item.type == "multiple":
        chosen = [str(v) for v in (raw if isinstance(raw, list) else [raw] if raw else [])]
        chosen = [v for v in chosen if v]
        if any(v not in item.options for v in chosen):
            return [], "Choose among the options."
        if not chosen:
            return [], "This question needs an answer." if item.required else None
        if len(chosen) < item.min_choices:
            return chosen, f"Choose at least {item.min_choices}."
        if item.max_choices and len(chosen) > item.max_choices:
            return chosen, f"Choose at most {item.max_choices}."
        return chosen, None

    if isinstance(raw, list):
        raw = raw[0] if raw else ""
    text = "" if raw is None else str(raw).strip()
    if item.type in ("likert", "slider"):
        if not text:
            return None, _missing(item)
        scale = item.scale()
        # At most 9 digits: int() of a long string is slow and, past 4,300 digits, an error.
        if not re.fullmatch(r"-?\d{1,9}", text) or int(text) not in scale:
            return None, f"Choose a point from {scale[0]} to {scale[-1]}."
        return int(text), None
    if item.type == "single":
        # An option is matched as the page sent it, as a multiple choice's are: one that
        # study.toml writes with a space at an end is still one of the options.
        if raw in item.options:
            return raw, None
        if text and text not in item.options:
            return None, "Choose one of the options."
        return text, None if text or not item.required else "This question needs an answer."
    # text: a form posts each line break as "\r\n", but the text box (its maxlength) counted it
    # as one character; the answer is what the box held.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return "", "This question needs an answer." if item.required else None
    if len(text) > item.max_chars:
        return text, f"Please keep this under {item.max_chars} characters."
    if item.min_words and word_count(text) < item.min_words:
        return text, f"Please write at least {item.min_words} words (you wrote {word_count(text)})."
    return text, None


def _missing(item: Item) -> str | None:
    if not item.required:
        return None
    if item.type == "slider":
        return "Move the slider to give a rating."
    return "This question needs an answer."


def chosen(cell: str, options: tuple[str, ...]) -> list[str]:
    """The options of a multiple-choice answer as `flatten` joined them ("; "), read back: the
    options the cell holds (an option may itself hold "; "), then any other part (an answer
    given under an option's earlier words), as given."""
    padded = f"; {cell}; "
    picked = set()
    for option in sorted(options, key=len, reverse=True):  # "A; B" before "A"
        if f"; {option}; " in padded:
            picked.add(option)
            padded = padded.replace(f"; {option}; ", "; ", 1)
    return [option for option in options if option in picked] + [part for part in padded.split("; ") if part]


def flatten(answers: Mapping[str, object]) -> dict[str, str]:
    """Answers as table cells: lists joined with "; ", numbers as text."""
    return {
        key: "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        for key, value in answers.items()
    }
