"""What a release is built from: a study folder or a folder of CoAuthor-format sessions.

- A **study folder** (it has `study.toml`): its finished sessions are exported with
  `study.export.coauthor.export_study` into a scratch folder, exactly as `study export` writes
  them, and read like any session folder; the conversations of a chat study's sessions (which
  have no editor log) and of a writing study's chat arm come from the paradigms' `release`
  hooks (study.paradigms.base), for `study.release.conversations`; survey answers and self-evaluations come from the
  study database; title, pay, duration, the conditions' paradigms, prompts, survey questions
  and the consent text come from `study.toml` for the dataset card (the models and settings the
  conditions ran with come from the database: study.release.arms_as_run).
- A **session folder**: `metadata.csv` with at least `session_id` and `worker_id` (the release
  format, as `study export` writes it), the sessions as `<session_id>.jsonl` in `sessions/` or
  next to `metadata.csv`, and optionally `survey.csv` (a `session_id` column plus one column per
  question). Identity columns of `survey.csv` (worker, assignment, HIT, access code, e-mail, IP,
  Prolific id, however spelled: "Worker ID", "WorkerId") are dropped; everything else is
  treated as free text and scanned.

A session file without a metadata row has no known writer (it could not honour a withdrawal),
so it is left out and reported.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from study import config as study_config
from study import config_texts
from study.export.within_design import WithinDesign
from study.curation.metadata_files import other_separator, separator_fix
from study.release.creators import Creators, from_study
from study.release.csvtable import CsvError, read_table

# Compared with a header by its letters and digits only (`identity_column`): spreadsheets and
# survey tools spell the same column "worker_id", "WorkerId", "Worker ID" or "Access Code".
IDENTITY_COLUMNS = frozenset({
    "workerid", "worker", "assignmentid", "hitid", "accesscode", "turksubmitto",
    "verificationcode", "email", "emailaddress", "ip", "ipaddress", "prolificpid",
})  # fmt: skip


class SourceError(ValueError):
    pass


@dataclass(frozen=True)
class SourceSession:
    session_id: str
    path: Path
    worker_id: str
    metadata: dict


@dataclass(frozen=True)
class SourceConversation:
    """A session's conversation as its paradigm's `release` hook gives it (study.paradigms.base):
    a chat study's session, or a chat arm's beside its log; keyed by the study's session id."""

    session_id: str
    worker_id: str
    record: dict


@dataclass(frozen=True)
class StudyInfo:
    """What `study.toml` says about the study, for the dataset card."""

    title: str
    pay: str
    duration_minutes: int
    min_seconds: int
    max_per_prompt: int
    conditions: tuple[dict, ...]
    prompts: tuple[dict, ...]
    survey: tuple[dict, ...]
    consent_text: str
    contact: str = ""  # [study] contact: published on purpose (study.release.contact)
    # A chat study's [chat] min_exchanges (the finish works after that many), where a writing
    # study has its minimum writing time and prompts; None for a writing study.
    min_exchanges: int | None = None
    # [design] assignment: "within" (each writer in every arm, study.server.within) or "between".
    assignment: str = "between"
    # Why the consent page is not ready for participants (study.config.unfinished_consent): it
    # still holds `study init`'s placeholder contact, which the card would quote; "" when ready.
    unfinished_consent: str = ""


@dataclass
class Source:
    kind: str  # "study" or "folder"
    path: Path
    name: str
    sessions: list[SourceSession]
    survey_columns: list[str] = field(default_factory=list)
    survey: dict[str, dict[str, str]] = field(default_factory=dict)  # session_id -> answers
    study: StudyInfo | None = None
    without_metadata: list[str] = field(default_factory=list)
    # A folder's metadata rows without a log (session id -> worker id, scanned for all the same):
    # refused unless left out with --exclude (study.release.preflight.check_logs).
    without_log: dict[str, str] = field(default_factory=dict)
    # Finished sessions left out because nothing confirms a real participant (study.store.verified).
    unconfirmed: list[str] = field(default_factory=list)
    # The conversations of a chat study's sessions, or of a writing study's chat arm (sorted by
    # session id); a folder source has none.
    conversations: list[SourceConversation] = field(default_factory=list)
    # A study's model calls as stored (study.store.provenance.calls_of): read once, for the
    # export's metadata.csv and the release's arms.json (study.release.arms_as_run); a folder
    # source has none.
    calls: dict[str, list[tuple[dict, str | None]]] = field(default_factory=dict)
    # A within-subjects study's design as it ran (study.export.within_design), read with the
    # calls, for within.json (study.release.within); None between subjects and for a folder.
    within: WithinDesign | None = None
    # Who created the dataset and who funded it (study.release.creators): a study's [release],
    # replaced by `study release build --creator/--funding`; a folder's come from those only.
    creators: Creators = field(default_factory=Creators)
    # Writers the study's database records as withdrawn (study.store.withdrawals): the build
    # leaves them out, and counts them, as the key's list. A folder source has none.
    withdrawn: set[str] = field(default_factory=set)

    @property
    def worker_ids(self) -> set[str]:
        ids = [s.worker_id for s in [*self.sessions, *self.conversations]] + [*self.without_log.values()]
        return {worker_id for worker_id in ids if worker_id}

    @property
    def session_ids(self) -> set[str]:
        """Every session the source names: with a log, a conversation, both, or neither (a row)."""
        return {s.session_id for s in [*self.sessions, *self.conversations]} | set(self.without_log)


def open_source(path: str | Path, scratch: Path) -> Source:
    """Read SOURCE; a study folder is exported into `scratch` first."""
    path = Path(path)
    if not path.is_dir():
        raise SourceError(
            f"{path}: not a folder. SOURCE is a study folder or a folder of sessions with "
            "metadata.csv."
        )
    if (path / study_config.CONFIG_NAME).is_file():
        return _from_study(path, scratch)
    if (path / "metadata.csv").is_file():
        return _from_folder(path, _slug(path.resolve().name))
    raise SourceError(
        f"{path}: neither a study folder (no {study_config.CONFIG_NAME}) nor a folder of sessions "
        "(no metadata.csv with session_id and worker_id)."
    )


def _from_folder(path: Path, name: str) -> Source:
    metadata_path = path / "metadata.csv"
    columns, numbered = _read_csv(metadata_path)
    missing = {"session_id", "worker_id"} - set(columns)
    if missing:
        separator = other_separator(columns)
        raise SourceError(separator_fix(metadata_path, separator) if separator
                          else _missing_columns(metadata_path, sorted(missing), columns))  # fmt: skip
    rows = {}
    for number, row in numbered:
        session_id = row["session_id"].strip()
        if not session_id:
            raise SourceError(f"{metadata_path} line {number}: empty session_id")
        if session_id in rows:
            raise SourceError(
                f"{metadata_path} line {number}: session {session_id} is listed twice"
            )
        rows[session_id] = row
    folder = path / "sessions" if (path / "sessions").is_dir() else path
    files = {p.stem: p for p in sorted(folder.glob("*.jsonl"))}
    sessions = [
        SourceSession(session_id, files[session_id], (row.get("worker_id") or "").strip(), row)
        for session_id, row in sorted(rows.items())
        if session_id in files
    ]
    source = Source("folder", path, name, sessions, without_metadata=sorted(set(files) - set(rows)),
                    without_log={session_id: (row.get("worker_id") or "").strip()
                                 for session_id, row in sorted(rows.items()) if session_id not in files})  # fmt: skip
    if (path / "survey.csv").is_file():
        source.survey_columns, source.survey = _read_survey(path / "survey.csv")
    return source


def _missing_columns(path: Path, missing: list[str], columns: list[str]) -> str:
    """What a metadata.csv without session_id or worker_id lacks, and how to give it: the
    column may be there under another spelling (MTurk's batch files say `WorkerId`)."""
    fixes = []
    for name in missing:
        spelled = [c for c in columns if re.sub(r"[^a-z0-9]", "", c.lower()) == name.replace("_", "")]
        fixes.append(f"rename column {spelled[0]!r} to {name}" if spelled else f"add a {name} column")
    return (f"{path} line 1: no {' or '.join(missing)} column (the header has: "
            f"{', '.join(columns) or 'nothing'}). Fix: {'; '.join(fixes)}. session_id is each "
            "log's file name without .jsonl; worker_id the writer's id, which the release "
            "replaces by a keyed pseudonym.")


def _read_survey(path: Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    header, numbered = _read_csv(path)
    if "session_id" not in header:
        separator = other_separator(header)
        raise SourceError(separator_fix(path, separator) if separator else f"{path}: needs a session_id column")
    columns = [c for c in header if c != "session_id" and not identity_column(c)]
    answers = {row["session_id"].strip(): {c: row[c] for c in columns} for _, row in numbered}
    return columns, answers


def identity_column(name: str) -> bool:
    """Whether a survey.csv column names who answered (worker, assignment, HIT, access code,
    e-mail, IP, Prolific id), however it is spelled: such a column is never released."""
    return re.sub(r"[^a-z0-9]", "", name.lower()) in IDENTITY_COLUMNS


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    try:
        return read_table(path)
    except CsvError as error:
        raise SourceError(str(error)) from None


def _from_study(path: Path, scratch: Path) -> Source:
    from study.export import within_design
    from study.export.coauthor import ExportError, export_study
    from study.store import create_tables, make_engine, provenance, reading
    from study.store.engine import sqlite_file

    try:
        study = study_config.load(path)
    except study_config.ConfigError as error:
        raise SourceError(str(error)) from None
    database = sqlite_file(study.database_url)
    if database is not None and not Path(database).exists():
        # Opened here, an empty study.db would be made, and the build would fail on its tables.
        raise SourceError(
            f"{path}: study '{study.name}' has not been served yet: no database at {database}, so "
            f"nothing to release (`study serve {path}` creates it)."
        )
    export_dir = scratch / "export"
    engine = make_engine(study.database_url)
    try:
        # A database an earlier version made gets the columns read here, as the export's would.
        create_tables(engine)
        # Read once for metadata.csv (the export) and arms.json (study.release.arms_as_run), so
        # the two describe the same calls; within subjects the design (within.json) in the same
        # read, so it describes the same study.db as they do.
        with reading(engine) as connection:
            calls = provenance.calls_of(connection)
            design = within_design.read(connection, study) if study.assignment == "within" else None
        try:
            export_study(study, export_dir, calls=calls, include_withdrawn=True)
        except (study_config.ConfigError, ExportError) as error:
            raise SourceError(str(error)) from None
        source = _from_folder(export_dir, _slug(study.name))
        source.kind, source.path, source.calls, source.within = "study", path, calls, design
        # The export writes a row for every log; a .jsonl without one is another of its files (a
        # chat arm's conversations, study.paradigms.chat.arm_export), not a session left out.
        source.without_metadata = []
        return _with_stored(source, study, engine)
    finally:
        engine.dispose()


def _with_stored(source: Source, study: study_config.Study, engine) -> Source:
    """`source` (the study's export) with what the database adds: the participants confirmed,
    the conversations, the survey answers and the arms as their sessions ran them."""
    from study.export import as_run
    from study.server import limits
    from study.store import reading
    from study.store import sessions as session_store
    from study.store import withdrawals
    from study import paradigms, providers

    with reading(engine) as connection:
        stored = {s["session_id"]: s for s in session_store.all_sessions(
            connection, finished_only=True, include_withdrawn=True)}  # fmt: skip
        source.withdrawn = withdrawals.withdrawn_ids(connection)
        counted = providers.counted_session_ids(connection, limits.from_study(study).access_codes)
        # A chat study's conversations (it has no editor logs), a chat arm's beside its logs.
        confirmed = [row for session_id, row in sorted(stored.items()) if session_id in counted]
        # The paradigms the sessions ran with: a chat arm changed to Tab lists under its name
        # since still has its chat sessions' conversations (study.export.as_run).
        records = [r for hooks in paradigms.release_hooks(as_run.study_as_run(study, confirmed))
                   for r in hooks.conversations(study, connection, confirmed)]  # fmt: skip
    # Only sessions of confirmed participants: a submission a provider synced, or a listed access code.
    # On a path of its own (a chat study) a session has no log: its conversation is all of it.
    own_path = paradigms.path_hooks(study) is not None
    logged = {s.session_id for s in source.sessions}
    candidates = set(stored) if own_path else logged
    source.unconfirmed = sorted(session_id for session_id in candidates if session_id not in counted)
    source.sessions = [s for s in source.sessions if s.session_id in counted]
    source.conversations = sorted(
        (SourceConversation(r["session_id"], _writer(stored[r["session_id"]]), r)
         for r in records if own_path or r["session_id"] in logged),
        key=lambda c: c.session_id,
    )  # fmt: skip
    exported = {s.session_id for s in source.sessions}
    questions = [q.id for q in study.survey]
    evaluation = ("clear_ending", "collaborated")
    source.survey_columns = questions + [f"self_evaluation_{key}" for key in evaluation]
    for session_id in sorted(exported):
        row = stored.get(session_id, {})
        answers = json.loads(row.get("survey") or "{}")
        checks = json.loads(row.get("self_evaluation") or "{}")
        if not answers and not checks:
            continue
        out = {q: _cell(answers.get(q)) for q in questions}
        out.update({f"self_evaluation_{key}": _cell(checks.get(key)) for key in evaluation})
        source.survey[session_id] = out
    if not source.survey:
        source.survey_columns = []
    # Each arm as its sessions ran it: study.toml may have changed an arm's paradigm under its
    # name since (study.export.as_run).
    source.study = _study_info(as_run.study_as_run(study, confirmed))
    source.creators = from_study(study.raw)
    return source


def _writer(session: dict) -> str:
    """Who took part, as metadata.csv names them (study.export.coauthor): the worker id, else
    the lab's access code."""
    return session["worker_id"] or session["access_code"] or ""


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):  # a multiple-choice answer (study.survey)
        return "; ".join(str(v) for v in value)
    return str(value)


def _study_info(study: study_config.Study) -> StudyInfo:
    from study import paradigms

    arms_of = {item.id: s.arms for s in study.surveys for item in s.items}

    return StudyInfo(
        title=study.title,
        pay=study.pay,
        duration_minutes=study.duration_minutes,
        min_seconds=study.min_seconds,
        max_per_prompt=study.max_per_prompt,
        # The card's arms by what their writers had; their models and settings as they ran are
        # study.release.arms_as_run's, from the database.
        conditions=tuple(
            {"name": c.name, "genre": c.genre, "arm": _arm_card(study, c),
             "paradigm": paradigms.arm_as_run(study, c).get("paradigm", c.paradigm)}
            for c in study.conditions
        ),
        prompts=tuple(
            {"code": p.code, "genre": p.genre, "title": p.heading} for p in study.prompts
        ),
        # A question of a survey asked of some arms only (`arms`) says which: the other arms'
        # cells in survey.csv are empty because nobody there was asked, not because nobody answered.
        survey=tuple({"id": q.id, "text": q.text, "type": q.type_name, "arms": arms_of.get(q.id, ())}
                     for q in study.survey),  # fmt: skip
        consent_text=_plain_text(_render(study.consent_template, study)),
        contact=study.contact,
        min_exchanges=study.chat.min_exchanges if study.chat is not None else None,
        assignment=study.assignment,
        unfinished_consent=config_texts.unfinished_consent(study) or "",
    )


def _arm_card(study: study_config.Study, condition: study_config.Condition) -> str:
    """What the condition's writers had, for the card; "" for CoAuthor's Tab list."""
    from study import control_arm, paradigms

    if control_arm.is_control(condition):
        return ("no assistant (a control arm): the writer writes on their own; the suggestion "
                "counts of `metadata.csv` are empty, not applicable.")
    return paradigms.arm_card(study, condition) or ""


def _render(template: str, study: study_config.Study) -> str:
    import jinja2

    return (
        jinja2.Environment(autoescape=True)
        .from_string(template)
        .render(study=study, minutes=study.duration_minutes, pay=study.pay, noun="story or essay",
                duration=config_texts.study_duration(study),
                min_writing=config_texts.min_writing_text(study))
    )


def _plain_text(markup: str) -> str:
    """The consent form as plain paragraphs (the card quotes it)."""
    text = re.sub(r"(?i)</p>|<br\s*/?>", "\n\n", markup)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p)


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return slug or "dataset"
