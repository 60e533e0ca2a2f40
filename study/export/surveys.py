"""Export survey answers with the sessions: `survey.csv` and `surveys.json`.

- `survey.csv`: one row per session, a `session_id` column and one column per question, in the
  study's order, then any question answered but since removed from study.toml; an in-session
  survey's questions appear once per occasion as `ID@K` (the answer after exchange K, e.g.
  `periodic_rating@3`). Multiple-choice answers are joined with
  "; ". This is the table `study release build` reads, redacts and publishes.
- `surveys.json`: {"responses": [...]}, one entry per survey response, typed: {"session_id",
  "survey", "placement", "occasion", "answers", "started_at", "submitted_at"} (times in seconds
  since 1970). Not .jsonl: a folder's .jsonl files are its sessions (study.release.source).

Neither marks a simulated writer's answers: a `simulated` column could clash with a question of
that id, and `study release build` of an export folder publishes every survey.csv column as a
question. The session_id joins them to the export's `simulated` (metadata.csv, a proactive
export's sessions.csv, a chat export's conversations.jsonl), as it does in a release.
"""

from __future__ import annotations

import csv
import io
import json

from study.config import Study
from study.store import surveys as survey_store
from study.survey.answers import flatten


def survey_rows(study: Study, responses: list[dict], session_ids: list[str]) -> tuple[list[str], list[dict]]:
    """The columns and rows of survey.csv for these sessions (sessions without answers left out)."""
    by_session: dict[str, dict[str, str]] = {}
    occasions: dict[str, set[int]] = {}
    for row in responses:
        cells = by_session.setdefault(row["session_id"], {})
        if row["placement"] == "in_session":
            occasions.setdefault(row["survey"], set()).add(row["occasion"])
            cells.update({f"{k}@{row['occasion']}": v for k, v in flatten(row["answers"]).items()})
        else:
            cells.update(flatten(row["answers"]))
    columns = []
    for survey in study.surveys:
        for item in survey.items:
            if survey.placement == "in_session":
                columns += [f"{item.id}@{k}" for k in sorted(occasions.get(survey.name, ()))]
            else:
                columns.append(item.id)
    # Answers to a question since removed from study.toml (or renamed) are still the writers'
    # answers: after the study's own columns, rather than left out of the table.
    known = set(columns)
    columns += sorted({key for cells in by_session.values() for key in cells} - known)
    rows = [
        {"session_id": sid, **{c: by_session[sid].get(c, "") for c in columns}}
        for sid in session_ids
        if sid in by_session
    ]
    return columns, rows


def export_surveys(study: Study, connection, session_ids: list[str]) -> dict[str, bytes]:
    """File name -> contents; empty when no exported session has answers."""
    wanted = set(session_ids)
    responses = [r for r in survey_store.all_responses(connection) if r["session_id"] in wanted]
    if not responses:
        return {}
    columns, rows = survey_rows(study, responses, session_ids)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["session_id", *columns], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    keys = ("session_id", "survey", "placement", "occasion", "answers", "started_at", "submitted_at")
    typed = {"responses": [{key: r[key] for key in keys} for r in responses]}
    return {
        "survey.csv": buffer.getvalue().encode("utf-8"),
        "surveys.json": json.dumps(typed, ensure_ascii=False, indent=1).encode("utf-8"),
    }


def counts(connection) -> dict[str, tuple[int, int]]:
    """Per survey: (submitted, in progress) responses, for `study status`."""
    out: dict[str, list[int]] = {}
    for row in survey_store.all_responses(connection):
        entry = out.setdefault(row["survey"], [0, 0])
        entry[0 if row["submitted_at"] else 1] += 1
    return {name: (done, open_) for name, (done, open_) in out.items()}
