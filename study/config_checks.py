"""What study.config checks of a study.toml before it builds the typed Study, and each
paradigm's own table of it.

First the file against `schemas/study.schema.json` (a condition's `paradigm` may be any
registered paradigm's), then what a schema cannot express: names used twice, a condition for
every prompt's genre and a prompt for every condition's, the control arm's rules
(study.control_arm) and each paradigm's own (study.paradigms.base: `config`). Every problem
names the file, the key and the fix; all of a file's problems are raised together.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema

from study import control_arm, paradigms
from study.paths import schemas_dir
from study.survey.definition import setting_fix


class ConfigError(ValueError):
    """A study.toml problem, worded for the researcher who has to fix it."""


def check_file(data: dict, source: Path) -> None:
    """Raise ConfigError with every problem of the parsed study.toml `data`."""
    _check_schema(data, source)
    _check_references(data, source)


def read_sections(data: dict, directory: Path, source: Path) -> dict:
    """Each paradigm's own table of study.toml, as its `config` hook reads it."""
    sections = {}
    for paradigm in paradigms.registered():
        settings = paradigm.settings()
        if settings is None:
            continue
        try:
            sections[settings.SECTION] = settings.load(data, directory, source)
        except ValueError as error:
            raise ConfigError(str(error)) from None
    return sections


def own_path(data: dict):
    """The paradigm whose own path a study takes: one with a path whose table the file has
    (a chat study's [chat]); None for the core's writing path."""
    for paradigm in paradigms.registered():
        settings = paradigm.settings()
        if paradigm.path and settings is not None and settings.SECTION in data:
            return paradigm
    return None


@cache
def validator(
    condition_paradigms: tuple[str, ...], tables: tuple[tuple[str, str], ...] = ()
) -> jsonschema.Draft202012Validator:
    """schemas/study.schema.json with every registered paradigm's condition values and its own
    table's schema (`tables`: (name, the schema as JSON) of each paradigm whose `config`
    module declares SCHEMA), so a paradigm added in its own folder needs no edit here."""
    schema = json.loads((schemas_dir() / "study.schema.json").read_text())
    # The schema's enum names the built-in paradigms' values.
    paradigm = schema["properties"]["conditions"]["items"]["properties"]["paradigm"]
    paradigm["enum"] = [*paradigm["enum"], *(p for p in condition_paradigms if p not in paradigm["enum"])]
    for name, text in tables:
        schema["properties"].setdefault(name, json.loads(text))
    return jsonschema.Draft202012Validator(schema)


def _check_schema(data: dict, source: Path) -> None:
    tables = tuple(
        (settings.SECTION, json.dumps(settings.SCHEMA, sort_keys=True))
        for settings in (paradigm.settings() for paradigm in paradigms.registered())
        if settings is not None and hasattr(settings, "SCHEMA")
    )
    found = validator(paradigms.condition_paradigms(), tables).iter_errors(data)
    errors = sorted(found, key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError("\n".join(_describe(error, data, source) for error in errors))


def _describe(error: jsonschema.ValidationError, data: dict, source: Path) -> str:
    key = _key_path(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(error.schema.get("properties", {}))
        where = f"[{key}]" if key else "the top level"
        return (
            f"{source}: unknown key {', '.join(repr(k) for k in extra)} in {where}. "
            f"Fix: remove it or correct its spelling (allowed: {allowed})."
        )
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        where = f"[{key}]" if key else "the top level"
        hint = error.schema.get("properties", {}).get(missing, {}).get("description", "")
        return f"{source}: {where} is missing the key '{missing}'. Fix: add it ({hint or 'see README'})."
    fix = setting_fix(error.schema.get("description") or "see README, Configuration")
    path = list(error.absolute_path)
    if error.validator in ("type", "enum") and len(path) == 3 and path[0] == "conditions":
        # A value of the wrong kind in a condition (assign = "no", unit = "paragrap"): name the
        # condition, which its position alone leaves the researcher to count.
        name = data["conditions"][path[1]].get("name")
        if isinstance(name, str):
            return f"{source}: conditions[{path[1]}] ('{name}').{path[2]}: {error.message}. {fix}"
    return f"{source}: {key}: {error.message}. {fix}"


def _key_path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _check_references(data: dict, source: Path) -> None:
    problems = []
    for section, key in (("conditions", "name"), ("prompts", "code")):
        seen = set()
        for i, item in enumerate(data.get(section, [])):
            if item[key] in seen:
                problems.append(
                    f"{source}: {section}[{i}].{key}: '{item[key]}' is used twice. "
                    f"Fix: give every entry of [[{section}]] its own {key}."
                )
            seen.add(item[key])
    problems += control_arm.config_problems(data["conditions"], source)
    for paradigm in paradigms.registered():
        settings = paradigm.settings()
        if settings is not None and hasattr(settings, "problems"):
            problems += settings.problems(data, source)
    if (path := own_path(data)) is not None:
        if data.get("design", {}).get("assignment") == "within":
            # Its own path assigns each session one condition (e.g. a chat study's assistant),
            # and study.server.within serves the writing path only: "within" would be ignored.
            problems.append(
                f'{source}: design.assignment: "within" is for writing studies; a {path.name} study '
                "gives each session one of its conditions, between subjects. Fix: remove [design] "
                '(or set assignment = "between").'
            )
        return _raise(problems)  # e.g. a chat study has document types, not prompts
    if not data.get("prompts"):
        problems.append(
            f"{source}: the study has no [[prompts]]. Fix: add at least one [[prompts]] table, "
            "or a [chat] table for a chat document-creation study."
        )
    for i, condition in enumerate(data["conditions"]):
        if "genre" not in condition:
            problems.append(
                f"{source}: conditions[{i}] is missing the key 'genre'. Fix: add it "
                "(the genre of the prompts this condition serves, e.g. \"creative\")."
            )
    genres = {c["genre"] for c in data["conditions"] if "genre" in c}
    for i, prompt in enumerate(data.get("prompts", [])):
        if not prompt["text"].strip():  # the prompt list and the reviewers' pages show its first line
            problems.append(
                f"{source}: prompts[{i}].text: prompt '{prompt['code']}' has no text, only spaces or "
                "line breaks. Fix: write the prompt the writer starts from, or remove the [[prompts]] table."
            )
        if prompt["genre"] not in genres:
            problems.append(
                f"{source}: prompts[{i}].genre: no condition serves genre '{prompt['genre']}'. "
                f"Fix: use one of {sorted(genres)} or add a [[conditions]] table with that genre."
            )
    # The balanced rule gives a session an arm of its prompt's genre: an arm of a genre no
    # prompt has (a typo'd genre) would never be given to anyone, and the study run one arm short.
    prompt_genres = {p["genre"] for p in data.get("prompts", [])}
    for i, condition in enumerate(data["conditions"]):
        if prompt_genres and condition.get("genre", "") not in prompt_genres | {""}:
            problems.append(
                f"{source}: conditions[{i}].genre: no prompt has genre '{condition['genre']}', so "
                f"condition '{condition.get('name', i)}' would never be given to a writer. Fix: use one "
                f"of {sorted(prompt_genres)} or add [[prompts]] of that genre."
            )
    if data.get("design", {}).get("assignment") == "within":
        # One session per participant would leave each in one arm: between subjects, unsaid.
        for section, key in (("mturk", "once_per_worker"), ("prolific", "once_per_participant")):
            if data.get(section, {}).get(key):
                problems.append(
                    f"{source}: {section}.{key}: true allows one session per participant, but the "
                    "within-subjects design ([design] assignment = \"within\") has each write once in "
                    f"every arm. Fix: set {key} = false, or assignment = \"between\"."
                )
        # Each participant writes once per arm of a genre, each time on a prompt they may still
        # take: with fewer places than arms the completion page promises parts the prompt page
        # then refuses (study.server.within, study.server.assignment.available_prompts).
        per_prompt = data.get("session", {}).get("max_per_prompt", 5)
        for genre in sorted(genres):
            arms = sum(1 for c in data["conditions"] if c.get("genre") == genre)
            prompts = sum(1 for p in data.get("prompts", []) if p["genre"] == genre)
            if prompts and prompts * per_prompt < arms:
                problems.append(
                    f"{source}: session.max_per_prompt: {per_prompt} with {prompts} '{genre}' prompt(s) "
                    f"lets a participant write {prompts * per_prompt} time(s), but the within-subjects "
                    f"design has {arms} arms of that genre to write in. Fix: set max_per_prompt to at "
                    f"least {-(-arms // prompts)} or add '{genre}' prompts."
                )
    # A main round admits only writers who passed its qualification round, so all of them have
    # taken part already: one session per participant (and the exclusion qualification or the
    # "done" group that comes with it) would turn every one of them away.
    gated = [r["name"] for r in data.get("rounds", []) if r.get("kind") == "main" and r.get("requires")]
    if gated:
        for section, key in (("mturk", "once_per_worker"), ("prolific", "once_per_participant")):
            if data.get(section, {}).get(key):
                problems.append(
                    f"{source}: {section}.{key}: true allows one session per participant, but the main "
                    f"round '{gated[0]}' admits only writers who took part in the round it requires. "
                    f"Fix: set {key} = false (a qualification round takes each writer once by itself)."
                )
    for i, question in enumerate(data.get("survey", [])):
        if question["type"] == "choice" and not question.get("options"):
            problems.append(
                f"{source}: survey[{i}].options: a \"choice\" question needs options. "
                f'Fix: add options = ["...", "..."].'
            )
    _raise(problems)


def _raise(problems: list[str]) -> None:
    if problems:
        raise ConfigError("\n".join(problems))
