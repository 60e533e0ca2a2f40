"""Load and check a study's `study.toml`.

The file format is defined by `schemas/study.schema.json`; study.config_checks checks a file
against it and adds the checks a schema cannot express (unique names, a condition for every
prompt's genre, each paradigm's own), and this module turns a checked file into typed objects
(reading the text files it names). Every error names the file, the key and the fix.
"""

from __future__ import annotations

import os
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

import jinja2

from study import control_arm
from study.config_checks import ConfigError, check_file, own_path, read_sections
from study.paths import not_utf8_where, templates_dir
from study.survey import checks as survey_checks
from study.survey import definition as survey_definition
from study.survey import questions as survey_questions

CONFIG_NAME = "study.toml"
GENRE_NOUNS = {"creative": "story", "argumentative": "essay"}


# The CoAuthor record's decoding settings that the participant's page is not given
# (Condition.page_controls): the server fills them in.
HIDDEN_CONTROLS = ("currentMaxToken", "currentTemperature", "currentTopP", "currentPresencePenalty",
                   "currentFrequencyPenalty")  # fmt: skip
# The six controls of the records of a session that had no Tab list, a control arm's
# (Condition.controls) or one whose paradigm offers none (a chat arm's:
# study.paradigms.counts_suggestions): empty, as schemas/coauthor-defs.schema.json allows, not the
# condition's n and decoding defaults, which would read as if it had offered Tab lists.
NO_TAB_CONTROLS = MappingProxyType({key: "" for key in ("currentN", *HIDDEN_CONTROLS)})


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
    # False closes the arm to new participants (a pilot showed it broken) while the sessions
    # given it, and within subjects the participants owed it, go on: study.server.assignment,
    # study.server.within.
    assign: bool = True

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

    def page_controls(self) -> dict[str, str]:
        """The controls the writing page gets: `currentN` (how many suggestions it shows, which
        the writer sees anyway) and the decoding settings empty, so the page cannot tell arms
        apart that differ only in them (issue 25). The event API fills them into every stored
        record (study.server.events_api.fill_controls)."""
        return {**self.controls(), **{key: "" for key in HIDDEN_CONTROLS}}

    @cached_property
    def decoding_record(self) -> Mapping[str, str]:
        """The decoding settings every stored record gets (the page's were empty), made once:
        the event API fills them into each batch."""
        controls = self.controls()
        return {key: controls[key] for key in HIDDEN_CONTROLS}  # read only: shared by every batch


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
    survey: tuple[survey_questions.Item, ...]
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
    surveys: tuple[survey_questions.Survey, ...] = ()
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

    def open_conditions_for(self, genre: str) -> list[Condition]:
        """The conditions of the genre a new session may be given: those not closed with
        `assign = false`."""
        return [c for c in self.conditions_for(genre) if c.assign]


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
        if path.read_bytes().startswith(b"\xef\xbb\xbf"):
            # Windows Notepad's "UTF-8 with BOM": TOML forbids the mark, and tomllib's "line 1,
            # column 1" points at a line that looks right.
            raise ConfigError(
                f"{path}: starts with a byte-order mark (BOM), which TOML does not allow. "
                "Fix: save it as UTF-8 without BOM (in Notepad: Save as, Encoding \"UTF-8\")."
            ) from None
        raise ConfigError(f"{path}: not valid TOML ({exc}). Fix the syntax at that line.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text ({not_utf8_where(exc)}). Fix: save the file as UTF-8."
        ) from None
    return from_mapping(data, directory, source=path)


def from_mapping(data: dict, directory: Path, source: Path | None = None) -> Study:
    source = source or directory / CONFIG_NAME
    check_file(data, source)

    study = data["study"]
    session = data.get("session", {})
    sugg = data.get("suggestions", {})
    texts = data.get("texts", {})
    database = study.get("database") or f"sqlite:///{directory / 'study.db'}"
    _check_database_url(database, source)
    if study.get("database"):
        database = _sqlite_in_folder(database, directory)
    try:
        surveys = survey_definition.load_surveys(data, directory, source)
    except survey_definition.SurveyError as error:
        raise ConfigError(str(error)) from None
    sections = read_sections(data, directory, source)
    path_of_its_own = own_path(data)
    unasked = survey_checks.never_asked(surveys, path_of_its_own.name if path_of_its_own else "writing", source)
    if unasked:
        raise ConfigError("\n".join(unasked))

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
        paradigm=path_of_its_own.name if path_of_its_own else "writing",
        consent_template=_read_text(directory, texts.get("consent"), "consent", source),
        instructions_template=_read_text(
            directory, texts.get("instructions"), "instructions", source
        ),
        instructions_confirmations=tuple(texts.get("instructions_confirmations", ())),
        raw=data,
        id=study.get("id", ""),
    )


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


def _read_text(directory: Path, name: str | None, key: str, source: Path) -> str:
    """A page template from the study folder, or the built-in one when the key is absent."""
    path = directory / name if name else templates_dir() / "init" / f"{key}.html"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise ConfigError(
            f"{source}: texts.{key}: cannot read '{path}'. "
            f"Fix: create that file or point texts.{key} at an existing one."
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{source}: texts.{key}: '{path}' is not UTF-8 text ({not_utf8_where(exc)}). "
            "Fix: save it as UTF-8."
        ) from None
    try:
        # The page is rendered as a Jinja template for every participant: a mistake in it would
        # otherwise pass `study serve` and answer each of them "500 Internal Server Error".
        jinja2.Environment().parse(text)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(
            f"{source}: texts.{key}: {path} line {exc.lineno}: {str(exc.message).rstrip('.')}. "
            "Fix: correct that line (the page is a Jinja template: {{ name }} for a value, "
            "{% if ... %} ... {% endif %})."
        ) from None
    return text


def _check_database_url(url: str, source: Path) -> None:
    """Refuse a [study] database SQLAlchemy cannot use: every command opening the database
    would otherwise end in its traceback (ArgumentError, NoSuchModuleError)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from study.store.engine import shown_url

    example = 'e.g. "postgresql+psycopg://user@host/db", or "" for SQLite in study.db'
    try:
        parsed = make_url(url)
    except ArgumentError:
        # Not echoed: a mistyped URL may still hold a password.
        raise ConfigError(
            f"{source}: study.database: is not a database URL. Fix: set it to an SQLAlchemy URL, {example}."
        ) from None
    try:
        parsed.get_dialect()
    except NoSuchModuleError:
        # "postgres://" is how Heroku and many hosts print a PostgreSQL address.
        name = parsed.drivername.split("+")[0]
        hint = "postgresql+psycopg://" if name == "postgres" else f"a database SQLAlchemy knows ({example})"
        raise ConfigError(
            f"{source}: study.database: {shown_url(url)} names the "
            f"database kind '{parsed.drivername}', which SQLAlchemy does not know. Fix: start it "
            f"with {hint}."
        ) from None


def _sqlite_in_folder(url: str, directory: Path) -> str:
    """A SQLite file named by a relative path ("sqlite:///data.db") is the study folder's, as
    every other file study.toml names: relative to the working directory, the server started
    in the folder and `study status FOLDER` run from elsewhere each read a database of its own."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:" or path.startswith("file:"):
        return url
    if Path(path).is_absolute():
        return url
    return parsed.set(database=str(directory / path)).render_as_string(hide_password=False)


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
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{source}: suggestions.blocklist_file: '{path}' is not UTF-8 text ({not_utf8_where(exc)}). "
            "Fix: save it as UTF-8."
        ) from None
    return tuple(
        line.strip().lower() for line in lines if line.strip() and not line.startswith("#")
    )


def _number_text(value: float | int) -> str:
    """CoAuthor stores control values as strings: "5", "0.9", "1" (not "1.0")."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)
