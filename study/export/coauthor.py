"""Export sessions in the CoAuthor 2021 release format.

One `<session_id>.jsonl` per session: the 17 keys in the release's order, the six `current*`
control values as strings, `eventNum` 0..n-1 in the browser's sequence order. And
`metadata.csv` with the release's columns and definitions (shared data README), plus `genre`
as in the fixtures' metadata, `simulated` (true for a session written by `study simulate`),
and the session's `condition` and the `paradigm` it ran with (study.export.as_run: study.toml may
have changed its arm's since; "none" for a control arm, whose suggestion
counts are left empty: not applicable, as they are where a paradigm says its writers had no Tab
list, e.g. a chat arm, whose conversations are in a file of their own beside the logs:
study.paradigms.base `coauthor_log`). And `models.csv`: the model each session's calls were
sent with (study.export.settings_as_run) beside the model(s) the endpoint said answered. Files
are written to a temporary name and renamed, so
an interrupted export never leaves a half-written session file.
An OUT holding another dataset (logs or a metadata.csv naming sessions the study never had) is
refused before anything is written (`check_out_folder`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from study import control_arm, paradigms
from study.export import as_run, settings_as_run
from study.config import ConfigError, Study
from study.curation.formats import CONTROL_KEYS, RELEASE_KEYS
from study.curation.metadata import official_metadata
from study.export.surveys import export_surveys
from study.store import create_tables, make_engine, provenance, reading
from study.store import events as event_store
from study.store import sessions as session_store
from study.store import simulated as simulated_store
from study.store.permissions import private_folder, write_private

METADATA_COLUMNS = (
    "timestamp", "worker_id", "session_id", "prompt_code", "temperature", "frequency_penalty",
    "num_query", "num_selected", "perc_selected", "num_cursor", "time", "num_event",
    "written_by_human", "genre", "simulated", "condition", "paradigm",
)  # fmt: skip
# The decoding settings metadata.csv gives, by their names in study.export.settings_as_run.
DECODING_COLUMNS = ("temperature", "frequency_penalty")
# models.csv, beside metadata.csv (whose columns stay the release's): per session the model its
# calls were sent with (study.export.settings_as_run) and the model(s) the endpoint said answered
# (study.store.provenance).
MODEL_COLUMNS = ("session_id", "condition", "model", "answered_model")
# The release gives submission times in US/Pacific local time, e.g. "8/26/2021 20:49:16".
PACIFIC = ZoneInfo("US/Pacific")
# A session log's name: a session id, 32 hex digits (the study server's and CoAuthor's alike).
SESSION_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class ExportSummary:
    sessions: int
    events: int
    skipped: int


def to_release_record(record: dict, event_num: int) -> dict:
    out = {key: record.get(key, "") for key in RELEASE_KEYS[:-1]}
    for key in CONTROL_KEYS:
        out[key] = "" if out[key] is None else str(out[key])
    out["eventNum"] = event_num
    return out


def release_timestamp(epoch_seconds: float) -> str:
    local = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc).astimezone(PACIFIC)
    return f"{local.month}/{local.day}/{local.year} {local.hour}:{local:%M:%S}"


def export_study(study: Study, out: Path, *, include_unfinished: bool = False,
                 calls: dict[str, list[tuple[dict, str | None]]] | None = None,
                 include_withdrawn: bool = False) -> ExportSummary:
    """`calls`: the study's model calls as stored (study.store.provenance.calls_of), given by a
    caller that needs them for more than the export (a release's arms.json), so that both read
    them once and say the same; read here when not given. The sessions of writers who withdrew
    (study.store.withdrawals) are left out unless `include_withdrawn` (a release build, which
    leaves them out itself and counts them in its CHANGELOG)."""
    engine = make_engine(study.database_url)
    # A database an earlier version made gets the tables and columns read below (study.store.schema).
    create_tables(engine)
    with reading(engine) as connection:
        candidates = session_store.all_sessions(
            connection, finished_only=not include_unfinished, include_withdrawn=include_withdrawn
        )
        # The withdrawn writers' too: an earlier export's logs of theirs go (_write_export).
        stored = {s["session_id"] for s in session_store.all_sessions(connection, include_withdrawn=True)}
        simulated = simulated_store.simulated_ids(connection)
    # A study on a paradigm's own path (a chat study) has no CoAuthor log; its format writes it.
    candidates = [s for s in candidates if study.paradigm == "writing"]
    # Before anything is written: a condition or prompt renamed or removed in study.toml after
    # sessions were stored under it would stop the export halfway.
    check_stored_names(study, candidates)
    # ... and an arm's paradigm changed under its name, where a session did not store its own.
    as_run.check_known(study, candidates)
    check_out_folder(out, stored)
    created: list[Path] = []
    replaced: dict[Path, bytes] = {}
    try:
        return _write_export(study, out, engine, candidates, simulated, created, stored, replaced, calls)
    except OSError as error:
        # A disk that fills, a folder made read-only: no export half in place. The files this
        # run created go again, and the tables it replaced (metadata.csv, survey.csv, ...) are
        # an earlier export's again: a new metadata.csv left beside would name sessions whose
        # logs just went.
        for path in reversed(created):
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink(missing_ok=True)
        unrestored = []
        for path, data in replaced.items():
            try:
                write_atomically(path, data)
            except OSError:
                unrestored.append(path.name)
        raise ExportError(
            f"{error.filename or out}: cannot write the export ({error.strerror or error}); "
            f"what it had written in {out} was removed"
            + (f" (the earlier {', '.join(unrestored)} could not be put back)" if unrestored else "")
            + ". Fix: free space or choose an --out folder you can write to, and run the export again."
        ) from None
    finally:
        engine.dispose()


class ExportError(ValueError):
    """The export could not be written; nothing it created is left behind."""


def _write_export(study, out, engine, candidates, simulated, created, stored, replaced, calls) -> ExportSummary:
    rows, total_events, skipped = [], 0, 0
    sent_by_session: dict[str, list[dict]] = {}

    def write(path: Path, data: bytes) -> None:
        """write_atomically, noting each file this run creates (removed again if a write fails)
        and what each table it replaces held (written back then). A session's log replaced is
        the same session's, never one the earlier metadata.csv does not name."""
        new = not path.exists()
        if not new and path.stem not in stored:
            replaced.setdefault(path, path.read_bytes())
        write_atomically(path, data)
        if new:
            created.append(path)

    if not out.exists():
        private_folder(out)
        created.append(out)
    extension_events = paradigms.extension_events()
    if calls is None:
        with reading(engine) as connection:
            calls = provenance.calls_of(connection)  # what each session's model calls were sent with
    for session in candidates:
        with reading(engine) as connection:
            records = event_store.records(connection, session["session_id"])
        if not records:
            skipped += 1
            continue
        # The settings the server wrote into the log, read from the whole log as the release's
        # arms are (study.release.arms_as_run), before the extension events leave it.
        log = settings_as_run.log_settings(records)
        # Events a paradigm added (e.g. MindCopilot's ghost text): the strict CoAuthor file has none.
        records = [r for r in records if r["eventName"] not in extension_events]
        release = [to_release_record(r, i) for i, r in enumerate(records)]
        write(
            out / f"{session['session_id']}.jsonl",
            b"".join(_dumps(record) + b"\n" for record in release),
        )
        total_events += len(release)
        sent = sent_by_session[session["session_id"]] = [call for call, _ in calls.get(session["session_id"], [])]
        rows.append(_metadata_row(study, session, release, session["session_id"] in simulated, sent, log))

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=METADATA_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write(out / "metadata.csv", buffer.getvalue().encode())
    # The sessions' survey answers beside them (study.export.surveys).
    with reading(engine) as connection:
        files = export_surveys(study, connection, [row["session_id"] for row in rows])
        answered = provenance.answered_models(connection)
        exported = {row["session_id"] for row in rows}
        beside = {}  # e.g. a chat arm's conversations beside its editor logs
        for module in paradigms.log_hooks():
            if hasattr(module, "files_beside"):
                beside.update(module.files_beside(study, connection, [s for s in candidates if s["session_id"] in exported]))
    files["models.csv"] = _models_csv(rows, sent_by_session, answered)
    files.update(beside)
    for name, data in files.items():
        write(out / name, data)
    # An earlier export into OUT (with --all, say) left logs of sessions this one leaves out:
    # beside the new metadata.csv they would be read as part of it (study report, study curate,
    # study release build). Only this study's own sessions' logs go, once all else is written.
    for path in out.glob("*.jsonl"):
        if path.stem in stored and path.stem not in exported:
            path.unlink()
    return ExportSummary(sessions=len(rows), events=total_events, skipped=skipped)


def check_out_folder(out: Path, stored: set[str]) -> None:
    """Raise ExportError when OUT holds another dataset's logs or metadata.csv (the CoAuthor
    release, another study's export): the export would replace that metadata.csv, its only
    record of those writers, and leave its logs beside this study's, read as one dataset by
    study report, study curate and study release build. An earlier export of this study is
    fine: it is what the export replaces."""
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.glob("*.jsonl") if SESSION_ID.fullmatch(p.stem) and p.stem not in stored)
    metadata = out / "metadata.csv"
    named: list[str] = []
    if metadata.is_file():
        try:
            with open(metadata, newline="", encoding="utf-8-sig") as handle:
                named = [row.get("session_id") or "" for row in csv.DictReader(handle)]
        except (UnicodeDecodeError, csv.Error):
            named = ["(unreadable)"]
        named = [n for n in named if n not in stored]
    if not foreign and not named:
        return
    held = []
    if foreign:
        held.append(f"{len(foreign)} session log(s) of no session of this study (e.g. {foreign[0]})")
    if named:
        held.append(f"a metadata.csv naming {len(named)} session(s) of no session of this study")
    raise ExportError(
        f"{out}: holds {' and '.join(held)}: another dataset, which this export would mix with "
        "this study's and whose metadata.csv it would replace. Nothing was written. Fix: choose an "
        "empty --out folder (or the folder of an earlier export of this study)."
    )


def check_stored_names(study: Study, sessions: list[dict]) -> None:
    """Raise ConfigError when stored sessions name a condition or prompt study.toml no longer has."""
    problems = []
    for key, what, known in (
        ("condition", "conditions", {c.name for c in study.conditions}),
        ("prompt_code", "prompts", {p.code for p in study.prompts}),
    ):
        missing: dict[str, int] = {}
        for session in sessions:
            value = session.get(key)
            if value and value not in known:
                missing[value] = missing.get(value, 0) + 1
        for name, count in sorted(missing.items()):
            label = "code" if what == "prompts" else "name"
            problems.append(
                f"{study.directory / 'study.toml'}: {what}: no entry with {label} = '{name}', which "
                f"{count} stored session(s) use. Fix: restore that [[{what}]] entry (a renamed one "
                f"keeps its old {label}); sessions already stored keep the {label} they were given."
            )
    if problems:
        raise ConfigError("\n".join(problems))


def _metadata_row(study: Study, session: dict, release: list[dict], simulated: bool, sent: list[dict],
                  log: dict | None) -> dict:  # fmt: skip
    """`sent`: the parameters of the session's model calls; `log`: its log's record of settings."""
    # The paradigm the session ran with, which study.toml may have changed since (study.export.as_run).
    condition = as_run.condition_as_run(study, session)
    # A chat arm's replies are not asked with the Tab settings its log records (paradigms.arm_as_run).
    own_calls = bool(paradigms.arm_as_run(study, condition))
    stats = official_metadata(release)
    submitted = session["completed_at"] or session["writing_finished_at"] or session["created_at"]
    row = {
        "timestamp": release_timestamp(submitted),
        "worker_id": session["worker_id"] or session["access_code"] or "",
        "session_id": session["session_id"],
        "prompt_code": session["prompt_code"],
        **_decoding(settings_as_run.session_settings(sent, log, own_calls)),
        **{key: stats[key] for key in METADATA_COLUMNS[6:13]},
        "genre": study.prompt(session["prompt_code"]).genre,
        "simulated": "true" if simulated else "false",
        "condition": condition.name,
        "paradigm": condition.paradigm,
    }
    # A control session could not ask for suggestions: its counts are "not applicable", not 0.
    # Nor could a writer whose paradigm has no Tab list (a chat arm's: the conversation is in
    # its own file).
    no_tab = control_arm.is_control(condition) or not paradigms.counts_suggestions(condition)
    return control_arm.blank_suggestion_figures(row) if no_tab else row


def _decoding(settings: tuple[tuple[str, tuple], ...]) -> dict:
    """metadata.csv's temperature and frequency penalty: what the session ran with
    (study.export.settings_as_run: its model calls, else its log), so a condition's settings
    edited in study.toml between rounds (its name kept) are not given to its earlier sessions.
    Empty, the release's missing value, where nothing stored records one, or where the session's
    calls were sent with two (a server restarted mid-session): never study.toml's of today."""
    ran = dict(settings)
    return {column: str(ran[column][0]) if len(ran[column]) == 1 else "" for column in DECODING_COLUMNS}


def _models_csv(rows: list[dict], sent: dict[str, list[dict]], answered: dict[str, list[str]]) -> bytes:
    """`sent`: per session the parameters of its model calls; `answered`: the models the endpoint
    named (study.store.provenance)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=MODEL_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        asked = settings_as_run.models_sent(sent[row["session_id"]])
        writer.writerow({
            "session_id": row["session_id"], "condition": row["condition"],
            # What its calls were sent with, empty for a session that made none: study.toml's
            # model of today would credit it with one swapped in under the condition's name since.
            # A control session (by the paradigm it ran with: its arm may have changed since) had
            # no model.
            "model": "" if control_arm.is_control_row(row) else provenance.cell(asked),
            "answered_model": provenance.cell(answered.get(row["session_id"])),
        })  # fmt: skip
    return buffer.getvalue().encode()


def _dumps(record: dict) -> bytes:
    # The release was written by Python's json.dumps: ", " and ": " separators, non-ASCII escaped.
    return json.dumps(record).encode()


def write_atomically(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a crash mid-export never leaves half a file), readable
    by its owner only: an export holds worker ids and every keystroke (study.store.permissions)."""
    write_private(path, data)
