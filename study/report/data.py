"""What a report is made from: a study folder, a release, or a folder of exported sessions.

- A **study folder** (`study.toml`): its finished sessions are exported exactly as `study
  export` writes them (into a scratch folder) and read back like any session folder; the
  participation funnel, the time spent at each stage, the suggestion requests and the survey
  answers come from the study database, the survey questions from `study.toml`, and within
  subjects the design as it ran (study.export.within_design).
- A **release** (`datapackage.json`, as `study release build` writes it) or a **session folder**
  (`metadata.csv` with the sessions beside it or in `sessions/`, as `study export` writes it, or
  the public CoAuthor release as distributed: `creative.csv` and `argumentative.csv` with the
  sessions beside them, in one folder or split per genre; `study.curation.metadata_files`):
  only finished sessions are there, so there is no funnel and no stage timing; survey answers
  come from `survey.csv` when present (study.report.survey_answers reads both), and a
  within-subjects release's design from its `within.json` (study.release.within).
  `ReportData.metadata` says which layout was read.

Sessions marked simulated (`study simulate`) carry `simulated=true` in the metadata.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from study import config as study_config
from study import paradigms
from study.curation.formats import SessionFileError, read_session
from study.curation.metadata_files import (
    GENRE_SHEETS,
    MetadataError,
    MetadataFiles,
    find_metadata,
    read_metadata_files,
    session_logs,
)
from study.curation.runner import run
from study.report.entities import EntityModel, load_model
from study.report.errors import ReportSourceError
from study.report.facts import SessionFacts, session_facts
from study.report.grammar import LanguageToolError, check_server
from study.export import within_design
from study.export.within_design import WithinDesign
from study.release import within as release_within
from study.report.survey_answers import Question, read_survey_csv, study_survey

STUDY, RELEASE, FOLDER = "study", "release", "folder"
# Time spent between the timestamps the study database keeps for a session.
STAGE_SPANS = (
    ("consent, instructions and prompt", "created_at", "writing_started_at"),
    ("writing", "writing_started_at", "writing_finished_at"),
    ("self-evaluation and survey", "writing_finished_at", "completed_at"),
)


# Functions other parts of the toolkit append to add their per-session metrics to a report:
# each is called as loader(data) once the sessions are read and each paradigm has added its
# own (study.paradigms.base: `report`), and may set data.extras[key]
# (study.report.sections.plugins says the shape).
EXTRA_LOADERS: list[Callable[[ReportData], None]] = []
NO_LOGS = EntityModel(None, "", "there are no session logs to read")


@dataclass
class ReportData:
    kind: str
    path: Path
    title: str
    sessions: list[SessionFacts]
    entity_model: EntityModel
    funnel: list[tuple[str, int | None]] | None = None
    stage_seconds: dict[str, list[float]] | None = None
    requests: list[dict] | None = None  # condition, latency_ms, error, model, configured (study database)
    questions: list[Question] = field(default_factory=list)
    answers: dict[str, dict[str, object]] = field(default_factory=dict)  # session -> answers
    unreadable: list[str] = field(default_factory=list)
    languagetool: str | None = None  # the LanguageTool server that checked grammaticality
    # Data other parts of the toolkit add for their own sections (chat turns, proactive
    # suggestions, ...), keyed by section; see study.report.sections.
    extras: dict[str, object] = field(default_factory=dict)
    # Sessions without a CoAuthor log (chat conversations): session id -> condition, so the
    # survey and per-condition tables group them like logged sessions.
    unlogged: dict[str, str] = field(default_factory=dict)
    # Those of them that `study simulate` wrote (the chat export's "simulated": true).
    unlogged_simulated: set[str] = field(default_factory=set)
    # (sessions, writers) left out because the writer withdrew (study.store.withdrawals): a study folder's.
    withdrawn: tuple[int, int] = (0, 0)
    # The judge (study.metrics.judges) for proactive HAR and KED and chat ITR, when
    # `--judge-endpoint` or `--deterministic-judge` gave one; without it those are not computed.
    judge: object | None = None
    # Which metadata was read, in words (MetadataFiles.describe): metadata.csv or the release's
    # per-genre sheets; `metadata_files` the files themselves, which the report names by
    # study.report.shown_paths, never by where they lie on this disk.
    metadata: str = ""
    metadata_files: MetadataFiles | None = None
    # The folder the report is written into (study.report.write_report), which the paths it
    # shows are relative to; None: not known, names alone.
    report_folder: Path | None = None
    # An export folder's provenance (models.csv, or a paradigm's export table, e.g. a proactive
    # export's sessions.csv): per
    # session its condition, the configured model and the model(s) that answered.
    models: list[dict] = field(default_factory=list)
    # A study folder's configured prompts and conditions (study.toml order), so tables list
    # those nobody has written yet; empty for a release or an export, which only know sessions.
    planned_prompts: list[str] = field(default_factory=list)
    planned_conditions: list[str] = field(default_factory=list)
    # A study folder's sessions given a condition whose writing is not finished, per condition:
    # not exported, so in no table, but `study status` and the balanced rule count them.
    unfinished: dict[str, int] = field(default_factory=dict)
    # A within-subjects study's design as it ran: a study folder's from its database
    # (study.export.within_design), a release's from its within.json (study.release.within, its
    # released participants only); None between subjects, and for an export, which holds no
    # arm lists or rows.
    within: WithinDesign | None = None
    # How arms were assigned ([design] assignment): a study folder's study.toml, "within" for a
    # release with within.json; None where not known (an export, the CoAuthor release, a release
    # without within.json), and "Arms compared" then infers it (study.plan.comparisons.pairing).
    design: str | None = None

    @property
    def simulated(self) -> int:
        return sum(1 for s in self.sessions if s.simulated) + len(self.unlogged_simulated)

    def condition_of(self) -> dict[str, str]:
        return {**self.unlogged, **{s.session_id: s.condition for s in self.sessions}}

    def conditions(self) -> list[str]:
        return sorted(set(self.condition_of().values()))

    def control_conditions(self) -> set[str]:
        """The conditions whose sessions had no assistant (study.control_arm)."""
        return {s.condition for s in self.sessions if not s.assistant}


def load(path: str | Path, *, entity_model: EntityModel | None = None,
         processes: int | None = None, languagetool: str | None = None,
         judge: object | None = None) -> ReportData:
    path = Path(path)
    if not path.is_dir():
        raise ReportSourceError(f"{path}: not a folder. Give a study folder, a release or a "
                                "folder of sessions with metadata.csv.")  # fmt: skip
    global _LANGUAGETOOL
    if languagetool:
        try:
            check_server(languagetool)
        except LanguageToolError as error:
            raise ReportSourceError(str(error)) from None
    _LANGUAGETOOL = languagetool
    # The entity model is loaded only where there are session logs to read (_from_folder).
    model = entity_model
    if (path / study_config.CONFIG_NAME).is_file():
        data = _from_study(path, model, processes)
    else:
        data = _from_sessions(path, model, processes)
    data.languagetool = languagetool
    data.judge = judge
    # Each registered paradigm's figures (study.paradigms.base.Paradigm: `report`), then the
    # loaders that may read them (a judging round's, the preregistered plan's).
    for loader in [*(module.load for module in _reporting()), *EXTRA_LOADERS]:
        loader(data)
    return data


def _reporting() -> list:
    """Each registered paradigm's report module (study.paradigms.base.Paradigm: `report`)."""
    return [paradigm.report_module() for paradigm in paradigms.registered() if paradigm.report]


def _from_sessions(path: Path, model: EntityModel | None, processes: int | None) -> ReportData:
    # A folder a paradigm's `study export --format` wrote is recognised by its report module's
    # EXPORT_FILE: a table naming each session's condition beside the logs (`export_conditions`,
    # e.g. ghost text's sessions.csv), or records without a CoAuthor log (a chat study's
    # conversations, which its own loader reads).
    exports = [module for module in _reporting() if hasattr(module, "EXPORT_FILE")]
    metadata = find_metadata(path)
    conditions = None
    unlogged = False
    for module in exports if metadata is None else ():
        file = path / module.EXPORT_FILE
        if not file.is_file():
            continue
        if hasattr(module, "export_conditions"):
            metadata = MetadataFiles(path, (file,), what=f"the export's table of {module.EXPORT_WHAT}")
            conditions = module.export_conditions(file)
        else:
            unlogged = True
        break
    if unlogged:
        data = ReportData(FOLDER, path, path.resolve().name, [], model or NO_LOGS)
    elif metadata is None:
        others = "".join(f", no {module.EXPORT_FILE} of {module.EXPORT_WHAT}" for module in exports)
        raise ReportSourceError(
            f"{path}: neither a study folder (no {study_config.CONFIG_NAME}) nor a folder of "
            f"sessions (no metadata.csv, {' or '.join(GENRE_SHEETS)} here or one folder up{others})."
        )
    else:
        kind = RELEASE if (metadata.folder / "datapackage.json").is_file() else FOLDER
        data = _from_folder(path, metadata, kind, model, title=metadata.folder.resolve().name,
                            conditions=conditions, processes=processes)
        if kind == RELEASE:  # a within-subjects release carries its design (study.release.within)
            try:
                data.within = release_within.read(metadata.folder)
            except release_within.WithinFileError as error:
                raise ReportSourceError(str(error)) from None
            data.design = "within" if data.within is not None else None
    survey = (metadata.folder if metadata else path) / "survey.csv"
    if survey.is_file():
        data.questions, data.answers = read_survey_csv(survey)
    tables = [m.EXPORT_FILE for m in exports if hasattr(m, "export_conditions")]
    for name in ("models.csv", *tables):  # what `study export` wrote beside the logs
        models = (metadata.folder if metadata else path) / name
        if models.is_file():
            data.models = _read_models(models)
            break
    return data


def _read_models(path: Path) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (csv.Error, UnicodeDecodeError) as error:
        raise ReportSourceError(f"{path}: cannot be read as a table of models ({error})") from None
    # A proactive export from before provenance has no model columns: nothing to show.
    return [r for r in rows if r.get("condition") and "answered_model" in r]


def _session_files(path: Path, metadata: MetadataFiles) -> dict[str, Path]:
    # A paradigm's file `study export` writes beside the logs (a chat arm's conversations) is
    # read by its own report module, not as a session that could not be read.
    beside = {name for module in _reporting() for name in getattr(module, "BESIDE_LOGS", ())}
    for folder in (path, metadata.folder):
        files = {p.stem: p for p in session_logs(folder) if p.name not in beside}
        if files:
            return files
    return {}


def _from_folder(path: Path, found: MetadataFiles, kind: str, model: EntityModel | None, *, title: str,
                 conditions: dict[str, str] | None = None, processes: int | None = None) -> ReportData:
    try:
        metadata = read_metadata_files(found)
    except MetadataError as error:
        raise ReportSourceError(str(error)) from None
    files = _session_files(path, found)
    if model is None:
        model = load_model() if files else NO_LOGS
    data = ReportData(kind, path, title, [], model, metadata=found.describe(), metadata_files=found)
    jobs = []
    for session_id, file in files.items():
        meta = dict(metadata.get(session_id, {}))
        if conditions and session_id in conditions:
            meta["condition"] = conditions[session_id]
        jobs.append((file, meta))
    global _ENTITY_NLP
    _ENTITY_NLP = model.nlp
    # All cores, as `study curate stats`, with or without a named-entity model: the pool's
    # workers are forked after the model is loaded, so each uses the parent's copy (no reload,
    # pages shared). Where processes cannot fork (spawn starts them empty), one process.
    if model.nlp is not None and not hasattr(os, "fork"):
        processes = 1
    # A session that fails in a way `_facts_worker` does not foresee (or kills its worker) is
    # left out and named like an unreadable one: it must not cost the report of the others.
    left_out = lambda job, message: (None, f"{job[0].name}: {message}")  # noqa: E731
    for facts, problem in run(_facts_worker, jobs, processes=processes, failed=left_out):
        if facts is None:
            data.unreadable.append(problem)
        else:
            data.sessions.append(facts)
    return data


_ENTITY_NLP = None
_LANGUAGETOOL: str | None = None


def _facts_worker(job: tuple[Path, dict]) -> tuple[SessionFacts | None, str | None]:
    file, meta = job
    try:
        facts = session_facts(read_session(file), meta, nlp=_ENTITY_NLP, languagetool=_LANGUAGETOOL)
        return facts, None
    except (SessionFileError, ValueError, KeyError, TypeError) as error:
        return None, f"{file.name}: {error}"


def _from_study(path: Path, model: EntityModel | None, processes: int | None) -> ReportData:
    from study.export.coauthor import ExportError, export_study
    from study.store import create_tables, make_engine, reading
    from study.store import sessions as session_store
    from study.store import withdrawals

    try:
        study = study_config.load(path)
    except study_config.ConfigError as error:
        raise ReportSourceError(str(error)) from None
    engine = make_engine(study.database_url)
    create_tables(engine)  # a study nobody has entered yet has an empty database, not none
    with reading(engine) as connection:
        rows = session_store.all_sessions(connection)
        funnel = _funnel(connection, rows)
        requests = _requests(connection)
        completed = [r["session_id"] for r in rows if r["completed_at"]]
        questions, answers = study_survey(study, connection, completed)
        within = within_design.read(connection, study) if study.assignment == "within" else None
        withdrawn = withdrawals.left_out(connection)
    engine.dispose()
    with tempfile.TemporaryDirectory(prefix="study-report-") as scratch:
        try:
            export_study(study, Path(scratch))
        except (study_config.ConfigError, ExportError) as error:
            raise ReportSourceError(str(error)) from None
        conditions = {r["session_id"]: r["condition"] for r in rows if r["condition"]}
        exported = MetadataFiles(Path(scratch), (Path(scratch) / "metadata.csv",))
        data = _from_folder(Path(scratch), exported, STUDY, model,
                            title=study.title or study.name, conditions=conditions,
                            processes=processes)  # fmt: skip
    data.path = path
    # The scratch export's metadata.csv is the report's own; the reader is told the source.
    data.metadata, data.metadata_files = "metadata from the study database", None
    data.funnel = funnel
    data.stage_seconds = {
        label: [r[end] - r[start] for r in rows if r[start] and r[end]]
        for label, start, end in STAGE_SPANS
    }
    data.requests = requests
    data.withdrawn = withdrawn
    data.questions, data.answers = questions, answers
    data.within = within
    data.design = study.assignment
    data.planned_prompts = [p.code for p in study.prompts]
    data.planned_conditions = [c.name for c in study.conditions]
    data.unfinished = dict(Counter(r["condition"] for r in rows if r["condition"] and not r["writing_finished_at"]))
    return data


def _funnel(connection, rows: list[dict]) -> list[tuple[str, int | None]]:
    from sqlalchemy import select

    from study import providers
    from study.store.db import events

    wrote = {
        row[0]
        for row in connection.execute(
            select(events.c.session_id).where(events.c.event_name == "text-insert").distinct()
        )
    }
    decided = providers.decisions(connection)
    return [
        ("entered", len(rows)),
        ("consented", sum(1 for r in rows if r["stage"] != "consent")),
        ("wrote (stored a text-insert)", sum(1 for r in rows if r["session_id"] in wrote)),
        ("finished writing", sum(1 for r in rows if r["writing_finished_at"])),
        ("completed the survey", sum(1 for r in rows if r["completed_at"])),
        # Each recruitment provider's approvals (study.providers); none synced: MTurk's line
        # without a count (the section says why).
        *((f"approved on {provider.title}", found.approved) for provider, found in decided),
        *([] if decided else [("approved on MTurk", None)]),
    ]


def _requests(connection) -> list[dict]:
    from sqlalchemy import select

    from study.store.db import suggestion_requests as table

    from study.store.db import sessions
    from study.store.withdrawals import not_withdrawn

    query = select(table.c.condition, table.c.latency_ms, table.c.error, table.c.model, table.c.parameters)
    # The model calls of writers who withdrew leave with their sessions (study.store.withdrawals).
    query = query.where(table.c.session_id.not_in(select(sessions.c.session_id).where(~not_withdrawn())))
    requests = []
    for row in connection.execute(query).mappings():
        request = dict(row)
        # parameters.model is the name the study asked for; model, the one the endpoint answered with.
        parameters = json.loads(request.pop("parameters") or "{}")
        request["configured"] = parameters.get("model") if isinstance(parameters, dict) else None
        requests.append(request)
    return requests
