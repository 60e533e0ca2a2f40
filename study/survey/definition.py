"""Surveys as a study defines them: `[[surveys]]` tables in study.toml, a shipped preset or a
file each may name, and the older `[[survey]]` question list.

The format is `schemas/survey.schema.json`; this module merges a survey's preset or file into
its table, checks the result against the schema, adds the checks a schema cannot express
(unique ids, show-if pointing at an earlier question, slider bands inside the range) and
returns typed `Survey` objects. Problems come back as one `SurveyError` whose lines each name
the file, the key and the fix.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from study.paths import not_utf8_where, schemas_dir, templates_dir

PLACEMENTS = ("before_writing", "after_session", "end_of_study", "in_session")
PARADIGMS = ("writing", "chat")
# The `[[survey]]` list's 7-point scale (CoAuthor App. C asked on 7-point Likert scales).
AGREE_LOW, AGREE_HIGH = "Strongly disagree", "Strongly agree"
DEFAULT_MAX_CHARS = 5000
LEGACY_NAME = "post_session"


class SurveyError(ValueError):
    """A survey definition problem; one line per problem, each naming the key and the fix."""


@dataclass(frozen=True)
class Band:
    start: int
    end: int
    label: str
    description: str = ""


@dataclass(frozen=True)
class ShowIf:
    item: str
    equals: str | int | None = None
    any_of: tuple = ()
    at_least: float | None = None
    at_most: float | None = None


@dataclass(frozen=True)
class Item:
    id: str
    type: str  # likert | slider | single | multiple | text
    text: str
    required: bool = True
    page: int = 1
    help: str = ""
    group: str = ""
    points: int = 7
    labels: tuple[str, ...] = ()
    low: str = ""
    high: str = ""
    min: int = 1
    max: int = 10
    bands: tuple[Band, ...] = ()
    options: tuple[str, ...] = ()
    min_choices: int = 0
    max_choices: int | None = None
    min_words: int = 0
    max_chars: int = DEFAULT_MAX_CHARS
    rows: int = 3
    show_if: ShowIf | None = None

    @property
    def type_name(self) -> str:
        """The type as documentation names it: "likert7", "choice", "slider1-10", ..."""
        if self.type == "likert":
            return f"likert{self.points}"
        if self.type == "slider":
            return f"slider{self.min}-{self.max}"
        return {"single": "choice", "multiple": "multiple choice"}.get(self.type, self.type)

    def scale(self) -> list[int]:
        """The values a likert or slider answer may take."""
        if self.type == "likert":
            return list(range(1, self.points + 1))
        if self.type == "slider":
            return list(range(self.min, self.max + 1))
        return []

    def label(self, value: int) -> str:
        """The label of a likert point ("" when the item names only its ends)."""
        if self.labels and 1 <= value <= len(self.labels):
            return self.labels[value - 1]
        if value == self.scale()[0]:
            return self.low
        if value == self.scale()[-1]:
            return self.high
        return ""


@dataclass(frozen=True)
class Survey:
    name: str
    placement: str
    items: tuple[Item, ...]
    title: str = "A short survey"
    intro: str = ""
    every: int = 0
    paradigms: tuple[str, ...] = PARADIGMS
    source: str = ""
    submit: str = "Submit"
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def pages(self) -> int:
        return max(item.page for item in self.items)

    def page_items(self, page: int) -> list[Item]:
        return [item for item in self.items if item.page == page]

    def item(self, item_id: str) -> Item:
        return next(item for item in self.items if item.id == item_id)

    def asks_in(self, paradigm: str) -> bool:
        return paradigm in self.paradigms


def presets() -> dict[str, Path]:
    """The shipped instruments, by name: templates/surveys/NAME.toml."""
    return {path.stem: path for path in sorted((templates_dir() / "surveys").glob("*.toml"))}


def load_surveys(data: dict, directory: Path, source: Path) -> tuple[Survey, ...]:
    """Every survey of a parsed study.toml: `[[survey]]` (as "post_session") then `[[surveys]]`."""
    problems: list[str] = []
    surveys: list[Survey] = []
    legacy = data.get("survey") or []
    if legacy:
        surveys.append(_from_legacy(legacy))
    for index, entry in enumerate(data.get("surveys") or []):
        where = f"surveys[{index}]"
        merged, origin = _merge(entry, directory, source, where, problems)
        if merged is None:
            continue
        errors = sorted(_validator().iter_errors(merged), key=lambda e: list(e.absolute_path))
        if errors:
            problems += [describe_error(error, origin, where) for error in errors]
            continue
        surveys.append(_build(merged))
    problems += _check(surveys, source)
    if problems:
        raise SurveyError("\n".join(problems))
    return tuple(surveys)


def from_mapping(mapping: dict, *, where: str = "survey", origin: str = "survey") -> Survey:
    """One survey from a mapping in the schema's shape (presets, and surveys built in code such
    as the chat study's pre-writing questions). Raises SurveyError."""
    errors = sorted(_validator().iter_errors(mapping), key=lambda e: list(e.absolute_path))
    if errors:
        raise SurveyError("\n".join(describe_error(e, origin, where) for e in errors))
    survey = _build(mapping)
    problems = _check([survey], Path(origin))
    if problems:
        raise SurveyError("\n".join(problems))
    return survey


def _merge(entry, directory: Path, source: Path, where: str, problems: list[str]):
    """The survey table with its preset or file underneath (the table's own keys win)."""
    if not isinstance(entry, dict):
        problems.append(f"{source}: {where}: must be a table. Fix: write [[surveys]] with keys.")
        return None, ""
    base: dict = {}
    origin = str(source)
    if "preset" in entry and "file" in entry:
        problems.append(f"{source}: {where}: has both preset and file. Fix: keep one of them.")
        return None, origin
    if "preset" in entry:
        path = presets().get(str(entry["preset"]))
        if path is None:
            problems.append(
                f"{source}: {where}.preset: unknown preset {entry['preset']!r}. "
                f"Fix: use one of {', '.join(presets())}."
            )
            return None, origin
        base, origin = _read_toml(path, source, f"{where}.preset", problems), f"{source} ({path.name})"
    elif "file" in entry:
        path = directory / str(entry["file"])
        base, origin = _read_toml(path, source, f"{where}.file", problems), f"{source} ({path})"
    if base is None:
        return None, origin
    return {**base, **entry}, origin


def _read_toml(path: Path, source: Path, key: str, problems: list[str]) -> dict | None:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError:
        problems.append(f"{source}: {key}: cannot read '{path}'. Fix: create it or correct the name.")
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{source}: {key}: '{path}' is not valid TOML ({exc}). Fix the syntax.")
    except UnicodeDecodeError as exc:
        problems.append(f"{source}: {key}: '{path}' is not UTF-8 text ({not_utf8_where(exc)}). Fix: save it as UTF-8.")
    return None


def _from_legacy(questions: list[dict]) -> Survey:
    """The `[[survey]]` list (id, text, type likert7/choice/text) as an after-session survey."""
    items = []
    for q in questions:
        kind = {"likert7": "likert", "choice": "single"}.get(q["type"], "text")
        extra = {"points": 7, "low": AGREE_LOW, "high": AGREE_HIGH} if kind == "likert" else {}
        items.append(
            Item(id=q["id"], type=kind, text=q["text"], required=q.get("required", True),
                 options=tuple(q.get("options", ())), **extra)
        )  # fmt: skip
    return Survey(name=LEGACY_NAME, placement="after_session", items=tuple(items))


def _build(mapping: dict) -> Survey:
    items = []
    for raw in mapping["items"]:
        values = {k: v for k, v in raw.items() if k not in ("show_if", "bands", "labels", "options")}
        condition = raw.get("show_if")
        items.append(Item(
            **values,
            labels=tuple(raw.get("labels", ())),
            options=tuple(raw.get("options", ())),
            bands=tuple(Band(b["from"], b["to"], b["label"], b.get("description", ""))
                        for b in raw.get("bands", ())),
            show_if=ShowIf(condition["item"], condition.get("equals"), tuple(condition.get("in", ())),
                           condition.get("at_least"), condition.get("at_most"))
            if condition else None,
        ))  # fmt: skip
    return Survey(
        name=mapping["name"],
        placement=mapping["placement"],
        items=tuple(items),
        title=mapping.get("title", "A short survey"),
        intro=mapping.get("intro", ""),
        every=mapping.get("every", 0),
        paradigms=tuple(mapping.get("paradigms", PARADIGMS)),
        source=mapping.get("source", ""),
        submit=mapping.get("submit", "Submit"),
        raw=mapping,
    )


def _check(surveys: list[Survey], source: Path) -> list[str]:
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
            if item.id in ids:
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


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((schemas_dir() / "survey.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def describe_error(error: jsonschema.ValidationError, origin: str, where: str) -> str:
    key = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(error.schema.get("properties", {}))
        return (
            f"{origin}: {key}: unknown key {', '.join(repr(k) for k in extra)}. "
            f"Fix: remove it or correct its spelling (allowed: {allowed})."
        )
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        hint = error.schema.get("properties", {}).get(missing, {}).get("description", "see README, Surveys")
        return f"{origin}: {key} is missing the key '{missing}'. Fix: add it ({hint})."
    return f"{origin}: {key}: {error.message}. {setting_fix(error.schema.get('description') or 'see README, Surveys')}"


def setting_fix(description: str) -> str:
    """The fix for a key with a wrong value, from its schema description. A description that
    opens with the case it holds in ('for "likert": the number of points, 2 to 11') names the
    case first: "Fix: for "likert", set it to the number of points, 2 to 11"."""
    case, colon, meaning = description.partition(": ")
    if description.startswith("for ") and colon:
        return f"Fix: {case}, set it to {meaning}."
    return f"Fix: set it to {description}."
