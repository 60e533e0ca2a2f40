"""Load and check a study's `study.toml`.

The file format is defined by `schemas/study.schema.json`; this module turns a checked file into
typed objects and adds the checks a schema cannot express (unique names, a condition for every
prompt's genre, text files that exist). Every error names the file, the key and the fix.
"""

from __future__ import annotations

import json
import os
import tomllib
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from study import control_arm, paradigms
from study.paths import schemas_dir, templates_dir
from study.survey import definition as survey_definition

CONFIG_NAME = "study.toml"
GENRE_NOUNS = {"creative": "story", "argumentative": "essay"}


class ConfigError(ValueError):
    """A study.toml problem, worded for the researcher who has to fix it."""


@dataclass(frozen=True)
class Condition:
    """One study condition: which model answers, and how it decodes (CoAuthor App. A.2)."""

    name: str
    genre: str = ""
    model: str = ""  # empty only in a control arm (paradigm "none", study.control_arm)
    mode: str = "completion"
    n: int = 5
    max_tokens: int = 30
    temperature: float = 1.0
    top_p: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    # Chat studies (study.paradigms.chat): the assistant's system message, e.g. CollabLLM's App. C.3 prompt.
    system_prompt: str = ""
    # "tab": CoAuthor's list on Tab. MindCopilot's interaction paradigm (Table 3): "L0"
    # user-initiated (the Tab list, or the assistant panel with [proactive] l0 = "assistant"),
    # "L1" idle-triggered ghost text, "L2" stateful, "L3" adaptive (README, Proactive co-writing).
    # "none": the control arm, no assistant (study.control_arm).
    paradigm: str = "L0"

    def controls(self) -> dict[str, str]:
        """The six `current*` control values of the CoAuthor record, as the strings it stores;
        empty in a control arm, which has no generation settings (the schema allows "")."""
        values = {
            "currentN": _number_text(self.n),
            "currentMaxToken": _number_text(self.max_tokens),
            "currentTemperature": _number_text(self.temperature),
            "currentTopP": _number_text(self.top_p),
            "currentPresencePenalty": _number_text(self.presence_penalty),
            "currentFrequencyPenalty": _number_text(self.frequency_penalty),
        }
        return {key: "" for key in values} if control_arm.is_control(self) else values


@dataclass(frozen=True)
class Prompt:
    code: str
    genre: str
    text: str
    title: str = ""

    @property
    def noun(self) -> str:
        return GENRE_NOUNS.get(self.genre, "text")

    @property
    def heading(self) -> str:
        """A one-line label for the prompt list: the title, else the first line."""
        return self.title or self.text.strip().splitlines()[0]


@dataclass(frozen=True)
class SuggestionSettings:
    endpoint: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout_seconds: float = 15.0
    max_requests_per_minute: int = 30
    blocklist: tuple[str, ...] = ()
    system_prompt: str = (
        "You are a writing assistant. Continue the user's text with the next sentence. "
        "Reply with the continuation only."
    )

    def base_url(self) -> str | None:
        return self.endpoint or os.environ.get("OPENAI_BASE_URL") or None

    def api_key(self) -> str:
        # Local endpoints need no key, but the openai SDK insists on a non-empty one.
        return os.environ.get(self.api_key_env) or "no-key"


@dataclass(frozen=True)
class Study:
    """A loaded, checked study configuration."""

    directory: Path
    name: str
    title: str
    database_url: str
    pay: str
    duration_minutes: int
    min_seconds: int
    max_per_prompt: int
    prompt_selection: str
    suggestions: SuggestionSettings
    conditions: tuple[Condition, ...]
    prompts: tuple[Prompt, ...]
    # The questions of every survey asked on the participant's path (not in-session), in order:
    # the columns of the survey table a release carries (study.release.source).
    survey: tuple[survey_definition.Item, ...]
    consent_template: str
    instructions_template: str
    raw: dict = field(repr=False, compare=False, default_factory=dict)
    # Made by `study init` and kept in study.toml: MTurk finds this study's HITs by it (two
    # studies made from the same template share a name, never an id).
    id: str = ""
    # The study's contact as the consent page names them ([study] contact): the one e-mail
    # address or phone number a release publishes on purpose (study.release.contact).
    contact: str = ""
    # Every survey, `[[survey]]` first (as "post_session"), then `[[surveys]]` (study.survey).
    surveys: tuple[survey_definition.Survey, ...] = ()
    # [texts] instructions_confirmations: required checkboxes on the instructions page.
    instructions_confirmations: tuple[str, ...] = ()
    # The built-in paradigms' own tables, as every paradigm's is in `sections` (their `config`
    # hook reads them): [chat] (study.paradigms.chat.config; None for a writing study) and
    # [proactive] (study.paradigms.proactive.settings). Fields, so a test may replace one.
    chat: object = None
    proactive: object = None
    # [session] outside_paste: "allow", "flag" or "refuse" text pasted from outside the editor
    # (study.curation.origin says what counts as outside).
    outside_paste: str = "allow"
    # [design] assignment: "between" (balanced, study.server.assignment) or "within" subjects
    # (study.server.within: one session per arm, Latin-square order).
    assignment: str = "between"
    # Every paradigm's own table of study.toml, by the table's name (study.paradigms.base:
    # `config`); `study.<name>` reads the same for any paradigm's.
    sections: dict = field(default_factory=dict, repr=False, compare=False)
    # The paradigm whose own path the study takes ("chat": its conditions are chat assistants,
    # CollabLLM), else "writing" (study.paradigms.path).
    paradigm: str = "writing"

    def __getattr__(self, name: str):
        # Only for names that are not fields: a paradigm's table added in its own folder.
        sections = self.__dict__.get("sections") or {}
        if name in sections:
            return sections[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def prompt(self, code: str) -> Prompt:
        for prompt in self.prompts:
            if prompt.code == code:
                return prompt
        raise KeyError(code)

    def condition(self, name: str) -> Condition:
        for condition in self.conditions:
            if condition.name == name:
                return condition
        raise KeyError(name)

    def conditions_for(self, genre: str) -> list[Condition]:
        return [c for c in self.conditions if c.genre == genre]


# The contact line of the consent form `study init` writes; `study serve` will not start while
# the study's consent page still holds it (a participant must be able to reach a real person).
CONSENT_CONTACT_PLACEHOLDER = "[REPLACE with the protocol director's name and how to reach them]"


def unfinished_consent(study: Study) -> str | None:
    """Why the study's consent page is not ready for participants, or None."""
    if CONSENT_CONTACT_PLACEHOLDER in study.consent_template:
        where = study.raw.get("texts", {}).get("consent") or "the built-in consent template"
        return (
            f"the consent page ({where}) still says {CONSENT_CONTACT_PLACEHOLDER!r}. "
            f"Fix: replace it with the protocol director's name and how to reach them."
        )
    return None


def minutes_text(minutes: int) -> str:
    """"1 minute", "15 minutes": how the consent page and the dataset card state a duration."""
    return f"{minutes} minute" if minutes == 1 else f"{minutes} minutes"


# Clocks and networks differ a little; the browser's timer is authoritative for the writer, the
# server's check of the minimum writing time (and MTurk review's) only guards against a
# tampered page.
MIN_TIME_SLACK_SECONDS = 3


def seconds_text(seconds: int) -> str:
    """"1 minute", "10 minutes", "45 seconds", "1 minute 30 seconds": how the instructions
    state the minimum writing time."""
    minutes, rest = divmod(int(seconds), 60)
    parts = [minutes_text(minutes)] if minutes else []
    if rest or not minutes:
        parts.append(f"{rest} second" if rest == 1 else f"{rest} seconds")
    return " ".join(parts)


def min_writing_text(study: Study) -> str:
    """The minimum writing time as the instructions state it ({{ min_writing }}): the timer's
    [session] min_seconds, not the whole study's duration_minutes."""
    return seconds_text(study.min_seconds)


def study_duration(study: Study) -> str:
    """The study's expected duration as participants and the dataset card read it: one source,
    [study] duration_minutes."""
    return minutes_text(study.duration_minutes)


def load(directory: str | os.PathLike) -> Study:
    """Read `DIR/study.toml`, check it, and return the study. Raises ConfigError."""
    directory = Path(directory).resolve()
    path = directory / CONFIG_NAME
    if not path.is_file():
        raise ConfigError(f"{path}: no such file. Create a study with `study init {directory}`.")
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}). Fix the syntax at that line.") from None
    return from_mapping(data, directory, source=path)


def from_mapping(data: dict, directory: Path, source: Path | None = None) -> Study:
    source = source or directory / CONFIG_NAME
    _check_schema(data, source)
    _check_references(data, source)

    study = data["study"]
    session = data.get("session", {})
    sugg = data.get("suggestions", {})
    texts = data.get("texts", {})
    database = study.get("database") or f"sqlite:///{directory / 'study.db'}"
    try:
        surveys = survey_definition.load_surveys(data, directory, source)
    except survey_definition.SurveyError as error:
        raise ConfigError(str(error)) from None
    sections = _read_sections(data, directory, source)
    own_path = _own_path(data)

    return Study(
        directory=directory,
        name=study["name"],
        title=study.get("title", "Writing with AI"),
        database_url=database,
        pay=study.get("pay", ""),
        contact=study.get("contact", ""),
        duration_minutes=study.get("duration_minutes", 15),
        min_seconds=session.get("min_seconds", 600),
        max_per_prompt=session.get("max_per_prompt", 5),
        prompt_selection=session.get("prompt_selection", "choose"),
        outside_paste=session.get("outside_paste", "allow"),
        assignment=data.get("design", {}).get("assignment", "between"),
        suggestions=SuggestionSettings(
            endpoint=sugg.get("endpoint", ""),
            api_key_env=sugg.get("api_key_env", "OPENAI_API_KEY"),
            timeout_seconds=float(sugg.get("timeout_seconds", 15)),
            max_requests_per_minute=sugg.get("max_requests_per_minute", 30),
            blocklist=_read_blocklist(directory, sugg.get("blocklist_file", ""), source),
            **({"system_prompt": sugg["system_prompt"]} if "system_prompt" in sugg else {}),
        ),
        conditions=tuple(Condition(**{"genre": "", **c}) for c in data["conditions"]),
        prompts=tuple(Prompt(**p) for p in data.get("prompts", [])),
        survey=tuple(i for s in surveys if s.placement != "in_session" for i in s.items),
        surveys=surveys,
        chat=sections.get("chat"),
        proactive=sections.get("proactive"),
        sections=sections,
        paradigm=own_path.name if own_path else "writing",
        consent_template=_read_text(directory, texts.get("consent"), "consent", source),
        instructions_template=_read_text(
            directory, texts.get("instructions"), "instructions", source
        ),
        instructions_confirmations=tuple(texts.get("instructions_confirmations", ())),
        raw=data,
        id=study.get("id", ""),
    )


def _read_sections(data: dict, directory: Path, source: Path) -> dict:
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


def _own_path(data: dict):
    """The paradigm whose own path a study takes: one with a path whose table the file has
    (a chat study's [chat]); None for the core's writing path."""
    for paradigm in paradigms.registered():
        settings = paradigm.settings()
        if paradigm.path and settings is not None and settings.SECTION in data:
            return paradigm
    return None


def new_study_id() -> str:
    return uuid.uuid4().hex


def missing_id_message(study: Study) -> str:
    """For a study.toml written before `study init` gave every study an id."""
    return (
        f"{study.directory / CONFIG_NAME}: [study] has no id, which MTurk commands need to tell "
        f"this study's HITs from other studies'. Fix: add the line  id = \"{new_study_id()}\"  "
        "under [study] (a new id made for you; HITs this study already posted stay tracked in "
        "its database). Never copy the id of another study."
    )


@cache
def _validator(condition_paradigms: tuple[str, ...]) -> jsonschema.Draft202012Validator:
    schema = json.loads((schemas_dir() / "study.schema.json").read_text())
    # A condition's `paradigm` is any registered paradigm's (study.paradigms), so a paradigm
    # added in its own folder needs no edit here; the schema's enum names the built-in ones.
    paradigm = schema["properties"]["conditions"]["items"]["properties"]["paradigm"]
    paradigm["enum"] = [*paradigm["enum"], *(p for p in condition_paradigms if p not in paradigm["enum"])]
    return jsonschema.Draft202012Validator(schema)


def _check_schema(data: dict, source: Path) -> None:
    validator = _validator(paradigms.condition_paradigms())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError("\n".join(_describe(error, source) for error in errors))


def _describe(error: jsonschema.ValidationError, source: Path) -> str:
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
    hint = error.schema.get("description") or "see README, Configuration"
    return f"{source}: {key}: {error.message}. Fix: set it to {hint}."


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
    if _own_path(data):
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
        if prompt["genre"] not in genres:
            problems.append(
                f"{source}: prompts[{i}].genre: no condition serves genre '{prompt['genre']}'. "
                f"Fix: use one of {sorted(genres)} or add a [[conditions]] table with that genre."
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


def _read_text(directory: Path, name: str | None, key: str, source: Path) -> str:
    """A page template from the study folder, or the built-in one when the key is absent."""
    path = directory / name if name else templates_dir() / "init" / f"{key}.html"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        raise ConfigError(
            f"{source}: texts.{key}: cannot read '{path}'. "
            f"Fix: create that file or point texts.{key} at an existing one."
        ) from None


def _read_blocklist(directory: Path, name: str, source: Path) -> tuple[str, ...]:
    if not name:
        return ()
    path = directory / name
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        raise ConfigError(
            f"{source}: suggestions.blocklist_file: cannot read '{path}'. "
            f'Fix: create it or set blocklist_file = "".'
        ) from None
    return tuple(
        line.strip().lower() for line in lines if line.strip() and not line.startswith("#")
    )


def _number_text(value: float | int) -> str:
    """CoAuthor stores control values as strings: "5", "0.9", "1" (not "1.0")."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)
