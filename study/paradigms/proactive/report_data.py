"""Proactive co-writing's (MindCopilot L1-L3) figures for the report, per suggestion.

Each session's suggestions are derived by `study curate proactive`'s own functions
(study.paradigms.proactive.curation.records.suggestion_records) and measured by study.paradigms.proactive.metrics
(acceptance_rate, char/word edit distance, HAR and KED), with the same defaults (a 60 s modify
window, the full HAR checklist, the default KED weights), so the report's per-paradigm table
agrees with `study curate proactive`'s paradigms.csv. HAR and KED need a judge
(`study report --judge-endpoint ... | --deterministic-judge`); without one they are not computed.

Sources: a study folder with proactive conditions (its finished proactive sessions exported as
`study export --format proactive` writes them, into a scratch folder), or a folder of extended
session files (`study export --format proactive`, or any folder whose logs carry `proactive`),
or its `proactive/` (`study export` of a study with a control or chat arm beside ghost text).
An export made with `--all` also holds sessions whose writer had not finished writing
(`finished=false` in its sessions.csv): they are left out and counted (`unfinished`), so a
study's figures read the same from its folder and from its `--all` export, as the chat
report's do (study.paradigms.chat.report_data).
The result goes to `data.extras["proactive"]` (study.paradigms.proactive.report draws it).
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from study import config as study_config
from study.report.data import STUDY, ReportData
from study.paradigms.proactive import PROACTIVE

MODIFY_WINDOW_MS = 60000  # `study curate proactive --modify-window-ms`'s default


@dataclass
class ProactiveMetrics:
    rows: list[dict]  # one per suggestion: its SuggestionRecord with har, ked and distances
    sessions: list[tuple[str, str, str]]  # (session id, paradigm, condition)
    judged: bool  # whether HAR and KED were computed
    judge: str = ""  # the judge model, as the section names it
    problems: list[str] = field(default_factory=list)
    figures: list = field(default_factory=list)  # a SessionFigures per session (Table 5)
    unfinished: int = 0  # sessions of an `--all` export left out: not finished writing


def load(data: ReportData) -> None:
    """The report's loader (study.report.data.EXTRA_LOADERS)."""
    if data.kind == STUDY:
        study = study_config.load(data.path)
        # Which sessions are MindCopilot's is the export's to say, by the paradigm each ran with
        # (study.export.as_run): an arm that ran L1 may be another paradigm in study.toml now.
        if study.chat is not None:
            return
        from study.paradigms.proactive.export import export_proactive

        with tempfile.TemporaryDirectory(prefix="study-report-proactive-") as scratch:
            export_proactive(study, Path(scratch))
            metrics = measure(_proactive_files(Path(scratch)), data)
    else:
        folder = extended_folder(data.path)
        if folder is None:
            return
        metrics = measure(_proactive_files(folder), data)
    if metrics.sessions:
        one_acceptance(data, metrics)  # every session the other sections show, unfinished ones too
        if data.kind != STUDY:
            leave_out(metrics, _unfinished(folder))
        data.extras["proactive"] = metrics


def leave_out(metrics: ProactiveMetrics, unfinished: set[str]) -> None:
    """This section's figures without the `unfinished` sessions, counted in `metrics.unfinished`."""
    kept = [entry for entry in metrics.sessions if entry[0] not in unfinished]
    metrics.unfinished = len(metrics.sessions) - len(kept)
    metrics.sessions = kept
    metrics.rows = [row for row in metrics.rows if row["session_id"] not in unfinished]
    metrics.figures = [figures for figures in metrics.figures if figures.session_id not in unfinished]


def one_acceptance(data: ReportData, metrics: ProactiveMetrics) -> None:
    """Every section reads a proactive session's acceptance as `metrics.acceptance.DEFINITION`
    says: the per-session `perc_selected` the collaboration and Table 3 sections average
    (suggestion-select per suggestion-open, which counts a partial accept once per Ctrl+Right
    word) becomes the session's accepted suggestions of those shown, and is left empty (not
    applicable) for a session shown none, as Table 5's "-" for L0."""
    from study.paradigms.proactive.metrics.acceptance import acceptance_rate

    paradigm_of = {session_id: paradigm for session_id, paradigm, _ in metrics.sessions}
    for facts in data.sessions:
        paradigm = paradigm_of.get(facts.session_id)
        if paradigm == "L0" and not facts.stats.get("num_query"):
            facts.stats["perc_selected"] = None  # the assistant panel offers no suggestion
            continue
        if paradigm not in PROACTIVE:
            continue  # Tab lists: a list chosen from counts once already
        rate = acceptance_rate((r["session_id"], r["outcome"]) for r in metrics.rows
                               if r["session_id"] == facts.session_id)  # fmt: skip
        facts.stats["perc_selected"] = None if math.isnan(rate.micro) else rate.micro


def _unfinished(folder: Path) -> set[str]:
    """The sessions the export's sessions.csv marks `finished=false` (an `--all` export); none
    for a folder without the column (an export from before it: every session it wrote was
    finished unless made with `--all`). An unreadable sessions.csv was reported already, by the
    report's reading of the folder's conditions (study.paradigms.proactive.report)."""
    try:
        with open(folder / "sessions.csv", newline="", encoding="utf-8") as handle:
            return {row["session_id"] for row in csv.DictReader(handle) if row.get("finished") == "false"}
    except (OSError, KeyError, csv.Error, UnicodeDecodeError):
        return set()


def extended_folder(path: Path) -> Path | None:
    """Where a folder's extended session files are: the folder itself (`study export --format
    proactive`), or its `proactive/`, where `study export` puts the ghost-text arms of a study
    with a control or chat arm beside them (study.paradigms.proactive.coauthor_log:
    export_beside), so its report measures them as the study folder's does; None: neither."""
    for folder in (path, path / "proactive"):
        if _proactive_files(folder):
            return folder
    return None


def _proactive_files(folder: Path) -> list[Path]:
    """Session files whose first record carries the `proactive` extension."""
    found = []
    for candidate in (folder, folder / "sessions"):
        for path in sorted(candidate.glob("*.jsonl")):
            try:
                with open(path, encoding="utf-8") as handle:
                    first = json.loads(handle.readline() or "{}")
            except (OSError, ValueError):
                continue  # an unreadable file is reported by the sessions' own reading
            if isinstance(first, dict) and "proactive" in first:
                found.append(path)
    return found


def measure(files: list[Path], data: ReportData) -> ProactiveMetrics:
    from study.curation.formats import FORMAT_PROACTIVE, SessionFileError, read_session
    from study.curation.origin import origin
    from study.curation.replay import DeltaError
    from study.paradigms.proactive.curation.records import session_paradigm, suggestion_records
    from study.paradigms.proactive.metrics.edit_distance import (
        char_edit_distance,
        word_edit_distance,
    )
    from study.paradigms.proactive.metrics.har import HarItem, har
    from study.paradigms.proactive.metrics.ked import ked
    from study.paradigms.proactive.metrics.table5 import session_figures

    judge = data.judge
    condition_of = data.condition_of()
    facts_of = {facts.session_id: facts for facts in data.sessions}
    metrics = ProactiveMetrics([], [], judged=judge is not None, judge=getattr(judge, "model", ""))
    for path in files:
        try:
            session = read_session(path)
        except SessionFileError as error:
            metrics.problems.append(str(error))
            continue
        if session.format != FORMAT_PROACTIVE:
            continue
        records = suggestion_records(session.events, session.session_id, MODIFY_WINDOW_MS)
        paradigm = session_paradigm(session.events)
        metrics.sessions.append((session.session_id, paradigm,
                                 condition_of.get(session.session_id, paradigm)))  # fmt: skip
        metrics.figures.append(session_figures(session.events, session.session_id, paradigm))
        if paradigm == "L0" and session.session_id in facts_of:
            # The strict logs the statistics were read from have no chat-receive, so a response
            # of L0's panel the writer pasted read there as text from outside; this log has them.
            try:
                facts_of[session.session_id].stats.update(origin(session.events).row())
            except (DeltaError, ValueError):
                pass
        for r in records:
            accepted = r.outcome in ("accepted", "accepted_modified", "partial")
            row = r.to_dict()
            row.update(har=None, ked=None, char_distance=None, word_distance=None)
            if judge is not None and r.shown_at is not None and r.reference.strip():
                row["har"] = har(HarItem(r.context, r.reference, r.suggestion), judge).accept
            if judge is not None and accepted:
                row["ked"] = ked(r.accepted_text, r.final_text, judge, context=r.context).value
            if accepted:
                row["char_distance"] = char_edit_distance(r.accepted_text, r.final_text)
                row["word_distance"] = word_edit_distance(r.accepted_text, r.final_text)
            metrics.rows.append(row)
    return metrics


def summary(rows: list[dict], judged: bool) -> dict[str, float | int | None]:
    """The figures of a group of suggestions (a session, a paradigm): acceptance as
    study.paradigms.proactive.metrics.acceptance defines it (macro: mean of per-session rates; micro:
    pooled), partial accepts, modify rate (accepted suggestions the writer then edited inside
    their span, of those accepted), edit distances of accepted suggestions, HAR and KED."""
    from study.paradigms.proactive.metrics.acceptance import ACCEPTED, acceptance_rate
    from study.paradigms.proactive.metrics.har_rate import har_rate
    from study.paradigms.proactive.metrics.ked import ked_mean

    rate = acceptance_rate((r["session_id"], r["outcome"]) for r in rows)
    accepted = [r for r in rows if r["outcome"] in ACCEPTED]
    modified = sum(1 for r in accepted if r["outcome"] == "accepted_modified")
    chars = [r["char_distance"] for r in accepted if r["char_distance"] is not None]
    words = [r["word_distance"] for r in accepted if r["word_distance"] is not None]
    return {
        "shown": rate.shown,
        "accepted": rate.accepted,
        "acceptance macro (%)": rate.macro,
        "acceptance micro (%)": rate.micro,
        "partial accepts": sum(1 for r in rows if r["outcome"] == "partial"),
        "modify rate (%)": 100 * modified / len(accepted) if accepted else math.nan,
        "char edit distance": sum(chars) / len(chars) if chars else math.nan,
        "word edit distance": sum(words) / len(words) if words else math.nan,
        "HAR (%)": har_rate(r["har"] for r in rows if r["har"] is not None).percent if judged else None,
        "KED": ked_mean(r["ked"] for r in rows) if judged else None,
    }
