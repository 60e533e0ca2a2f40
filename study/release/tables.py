"""The tables of a release (metadata, survey, statistics) and their Frictionless Table Schemas.

`metadata.csv` keeps CoAuthor's columns (shared data README, "Metadata columns") with two
changes: `worker_id` holds the writer's pseudonym (`study.release.pseudonyms`), and the
columns computed from the log (num_query ... written_by_human) are recomputed from the released
log with `study.curation.metadata.official_metadata`, so they always agree with it (but for the
suggestion counts of a session that had no Tab list, a control arm's or a chat arm's: empty, not
applicable, as `study export` leaves them). Source
columns outside this list are not released. Rows are sorted by session_id.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from types import SimpleNamespace

from study import control_arm, paradigms
from study.curation.stats import COLUMNS as STATS_COLUMNS
from study.curation.stats import SUMMARY_COLUMNS, Summary, condition_of
from study.export.coauthor import METADATA_COLUMNS

COMPUTED = METADATA_COLUMNS[6:13]  # num_query .. written_by_human
_TYPES = {
    "temperature": "number", "frequency_penalty": "number", "time": "number",
    "num_query": "integer", "num_selected": "integer", "perc_selected": "integer",
    "num_cursor": "integer", "num_event": "integer", "written_by_human": "integer",
}  # fmt: skip
_DESCRIPTIONS = {
    "timestamp": "submission time, US/Pacific local time, as CoAuthor gives it (M/D/YYYY H:MM:SS)",
    "worker_id": "the writer's pseudonym: keyed HMAC-SHA256 of the worker id, stable over releases",
    "session_id": "the session's released id (keyed, not the study server's id); its log is "
    "sessions/<session_id>.jsonl",
    "prompt_code": "the prompt the writer chose",
    "temperature": "sampling temperature of the session's condition as the session ran it: its "
    "model calls were sent with it (else its log records it), which study.toml may no longer say; "
    "empty when nothing stored with the session records it",
    "frequency_penalty": "frequency penalty of the session's condition as the session ran it (as "
    "temperature); empty when nothing stored with the session records it",
    "num_query": "number of suggestion-open events",
    "num_selected": "number of suggestion-select events",
    "perc_selected": "round(100 * num_selected / num_query), 0 without queries",
    "num_cursor": "cursor-forward + cursor-backward + cursor-select events",
    "time": "(last - first eventTimestamp) / 60000, minutes",
    "num_event": "number of events (lines of the log)",
    "written_by_human": "round(100 * characters inserted by the writer / all inserted characters)",
    "genre": "creative or argumentative",
    "simulated": "true when the session was written by a simulated writer (study simulate), not "
    "a person; empty when the source does not say",
    "condition": "the study condition (arm) the session was assigned to; empty when the source "
    "does not say",
    "paradigm": "the interaction paradigm the session ran with (its condition's then): none (a "
    "control arm, no assistant: its suggestion counts are empty, not applicable), L0 (Tab "
    "suggestions, as CoAuthor), L1-L3 (proactive ghost text), chat (a chat assistant in a panel "
    "beside the editor, no Tab list: its suggestion counts are empty, not applicable; its "
    "conversation is in conversations.jsonl); empty when the source does not say",
}


def metadata_row(source_row: Mapping, pseudonym: str, official: Mapping, session_id: str) -> dict:
    row = {column: (source_row.get(column) or "") for column in METADATA_COLUMNS}
    row["worker_id"] = pseudonym
    row["session_id"] = session_id
    for column in COMPUTED:
        row[column] = official[column]
    return control_arm.blank_suggestion_figures(row) if _had_no_tab_list(row) else row


def _had_no_tab_list(row: Mapping) -> bool:
    """A session that could not ask for a Tab list: a count of 0 would say the writer could ask
    and did not. The same reading as `study export`'s metadata.csv (study.export.coauthor), so
    the release and the export it is built from agree."""
    arm = SimpleNamespace(paradigm=str(row.get("paradigm") or "") or None)
    return control_arm.is_control_row(row) or not paradigms.counts_suggestions(arm)


def metadata_schema() -> dict:
    fields = []
    for column in METADATA_COLUMNS:
        entry = {
            "name": column,
            "type": _TYPES.get(column, "string"),
            "description": _DESCRIPTIONS[column],
        }
        if column in ("worker_id", "session_id"):
            entry["constraints"] = {"required": True}
        if column == "worker_id":
            entry["constraints"]["pattern"] = "w[0-9a-f]{20}"
        fields.append(entry)
    return {"fields": fields, "primaryKey": ["session_id"], "missingValues": [""]}


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Mapping]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _text(row.get(c)) for c in columns})
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def write_metadata_parquet(path: Path, rows: Sequence[Mapping]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {"number": pa.float64(), "integer": pa.int64(), "string": pa.string()}
    schema = pa.schema([pa.field(c, kinds[_TYPES.get(c, "string")]) for c in METADATA_COLUMNS])
    columns = {
        c: [_typed(row.get(c), _TYPES.get(c, "string")) for row in rows] for c in METADATA_COLUMNS
    }
    pq.write_table(pa.table(columns, schema=schema), path, compression="snappy")


def _typed(value, kind: str):
    if kind == "string":
        return "" if value is None else str(value)
    if value in (None, ""):
        return None
    return float(value) if kind == "number" else int(value)


def read_metadata_parquet(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def survey_schema(columns: Sequence[str]) -> dict:
    fields = [{"name": "session_id", "type": "string", "constraints": {"required": True}}]
    fields += [{"name": c, "type": "string"} for c in columns]
    return {"fields": fields, "primaryKey": ["session_id"], "missingValues": []}


def stats_schema() -> dict:
    fields = []
    for column in STATS_COLUMNS:
        if column in ("session_id", "format"):
            kind = "string"
        elif column in ("time", "writer_share_final", "equality", "mutuality", "distinct_2",
                        "typed_share", "assistant_share", "outside_share"):
            kind = "number"
        else:
            kind = "integer"
        fields.append({"name": column, "type": kind})
    return {"fields": fields, "primaryKey": ["session_id"], "missingValues": ["", "nan"]}


SUMMARY_GROUPINGS = ("genre", "condition")
SUMMARY_HEADER = ("grouping", "group", "sessions") + tuple(
    heading for heading, _ in SUMMARY_COLUMNS
)


def stats_row(stats: Mapping, metadata_row: Mapping) -> dict:
    """A session's row of stats.csv: the curation core's statistics, but for a session that had no
    Tab list, whose suggestion counts are empty as in metadata.csv (not applicable), so the two
    files do not say 0 and "not applicable" of one session, and summary.csv's queries and
    acceptance are over the sessions that could ask (as `study report`'s Table 3). A control
    arm's equality and mutuality are empty too: with no model there are no turns to share (0)
    and no interaction (the paper's printed sets count `insert`, so about 0.37), as `study
    report` reads them (study.control_arm.COLLABORATION_SCORES)."""
    blank = [*control_arm.SUGGESTION_COLUMNS] if _had_no_tab_list(metadata_row) else []
    if control_arm.is_control_row(metadata_row):
        blank += control_arm.COLLABORATION_SCORES
    return {**stats, **dict.fromkeys(blank)}


def summary_rows(stats: Sequence[Mapping], metadata: Mapping[str, Mapping]) -> list[dict]:
    """Table 3-style means per genre and per condition (`study.curation.stats.Summary`). The
    condition is the session's arm where the source names one (a study's, as in metadata.csv and
    the card), else CoAuthor's reading of its decoding settings (Figure 2's low/high randomness):
    a study's arms that share a temperature are not one condition."""
    enriched = {
        session_id: {
            **row,
            "condition": row.get("condition")
            or condition_of(row.get("temperature"), row.get("frequency_penalty")),
        }
        for session_id, row in metadata.items()
    }
    out = []
    for grouping in SUMMARY_GROUPINGS:
        summary = Summary(grouping, enriched)
        for row in stats:
            summary.add(row)
        for entry in summary.table():
            group = entry.pop(grouping)
            out.append(
                {"grouping": grouping, "group": group, **{k: _rounded(v) for k, v in entry.items()}}
            )
    return out


def _rounded(value):
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value


def summary_schema() -> dict:
    fields = [{"name": "grouping", "type": "string"}, {"name": "group", "type": "string"},
              {"name": "sessions", "type": "integer"}]  # fmt: skip
    fields += [{"name": heading, "type": "number"} for heading, _ in SUMMARY_COLUMNS]
    return {"fields": fields, "missingValues": [""]}
