"""Surveys as a study defines them: `[[surveys]]` tables in study.toml, a shipped preset or a
file each may name, and the older `[[survey]]` question list.

The format is `schemas/survey.schema.json`; this module merges a survey's preset or file into
its table, checks the result against the schema, adds the checks a schema cannot express
(study.survey.checks: unique ids, show-if pointing at an earlier question, slider bands inside
the range) and returns typed `Survey` objects (study.survey.questions). Problems come back as
one `SurveyError` whose lines each name the file, the key and the fix.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path

import jsonschema

from study.paths import not_utf8_where, schemas_dir, templates_dir
from study.survey import checks
from study.survey.questions import AGREE_HIGH, AGREE_LOW, LEGACY_NAME, PARADIGMS, Band, Item, ShowIf, Survey


class SurveyError(ValueError):
    """A survey definition problem; one line per problem, each naming the key and the fix."""


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
    problems += checks.beyond_schema(surveys, source)
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
    problems = checks.beyond_schema([survey], Path(origin))
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
        arms=tuple(mapping.get("arms", ())),
        source=mapping.get("source", ""),
        submit=mapping.get("submit", "Submit"),
        raw=mapping,
    )


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

