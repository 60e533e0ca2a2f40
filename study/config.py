"""Load and check a study's `study.toml`.

The file format is defined by `schemas/study.schema.json`; study.config_checks checks a file
against it and adds the checks a schema cannot express (unique names, a condition for every
prompt's genre, each paradigm's own), and this module turns a checked file into typed objects
(study.config_types, reading the text files it names). Every error names the file, the key
and the fix. What the pages say of the settings is study.config_texts.
"""

from __future__ import annotations

import os
import tomllib
import uuid
from pathlib import Path

import jinja2

from study.config_checks import ConfigError, check_file, own_path, read_sections
# study.config is the facade the toolkit reads study.toml through: most modules import the typed
# study and its error from here (config.load, config.Study, config.Condition, config.ConfigError).
from study.config_types import Condition, Prompt, Study, SuggestionSettings
from study.paths import not_utf8_where, templates_dir
from study.survey import checks as survey_checks
from study.survey import definition as survey_definition

__all__ = ["CONFIG_NAME", "Condition", "ConfigError", "Prompt", "Study", "SuggestionSettings", "from_mapping",
           "load", "missing_id_message", "new_study_id"]  # fmt: skip

CONFIG_NAME = "study.toml"


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
    unasked += survey_checks.arm_problems(surveys, [c["name"] for c in data["conditions"]], source)
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
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        # Not echoed: a mistyped URL may still hold a password.
        raise ConfigError(
            f"{source}: study.database: is not a database URL. Fix: set it to an SQLAlchemy URL, {example}."
        ) from None
    try:
        dialect = parsed.get_dialect()
    except NoSuchModuleError:
        # "postgres://" is how Heroku and many hosts print a PostgreSQL address.
        name = parsed.drivername.split("+")[0]
        hint = "postgresql+psycopg://" if name == "postgres" else f"a database SQLAlchemy knows ({example})"
        raise ConfigError(
            f"{source}: study.database: {shown_url(url)} names the "
            f"database kind '{parsed.drivername}', which SQLAlchemy does not know. Fix: start it "
            f"with {hint}."
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as error:
        # "postgresql+psycopg2://", as most tutorials write it: the toolkit installs psycopg 3.
        postgres = parsed.get_backend_name() == "postgresql"
        fix = ("start it with postgresql+psycopg://, the driver pip install -e '.[postgres]' installs"
               if postgres else f"install the driver (pip install {error.name})")
        raise ConfigError(
            f"{source}: study.database: {shown_url(url)} needs the driver '{error.name}', which is "
            f"not installed. Fix: {fix}."
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
