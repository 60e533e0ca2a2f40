"""The proactive requests file, `suggestion_requests.json` (schemas/proactive-requests.schema.json):
what the server asked the model for each proactive suggestion, beside the exported sessions.

The log has the suggestion (a_t), what the writer did with it (u_t) and the text before and
after (s_t+1), but not what the model saw: the L1 local window or the L2 marked-up snapshot
(MindCopilot §3's s_t, App. H's document_snapshot), which the server keeps in
`suggestion_requests`. `study export --format proactive` writes it here so that HAR, KED and
App. G's RL triples can be rebuilt from the files alone; `study curate proactive` reads it back
into suggestions.csv (`state`, `strategy`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import jsonschema

from study.paths import schemas_dir

FILE_NAME = "suggestion_requests.json"
FORMAT = "proactive-requests"
# The per-suggestion keys the proactive API stores in `parameters` (study.paradigms.proactive.api)
# that the file carries as its own fields; the rest of `parameters` is the decoding.
RECORD_KEYS = ("paradigm", "strategy", "stage", "idle_ms_used", "context", "prompt_hash", "rationale")


class RequestsFileError(ValueError):
    """A requests file that cannot be read, worded for the person who has to fix it."""


def request_entry(row: dict) -> dict:
    """One entry from a suggestion_requests row (id, session_id, created_at, model, parameters,
    suggestions, latency_ms, error; JSON columns as stored)."""
    parameters = json.loads(row["parameters"]) if isinstance(row["parameters"], str) else dict(row["parameters"])
    shown = json.loads(row["suggestions"]) if isinstance(row["suggestions"], str) else row["suggestions"]
    entry = {"suggestion_id": row["id"], "session_id": row["session_id"],
             "created_at": int(row["created_at"] * 1000), "model": row["model"]}  # fmt: skip
    entry.update({key: parameters.pop(key, None) for key in RECORD_KEYS})
    entry["suggestion"] = shown[0].get("original") if shown else None
    entry["latency_ms"] = row["latency_ms"]
    entry["error"] = row["error"]
    entry["decoding"] = {k: v for k, v in parameters.items() if k not in ("idle_ms_next", "history_items")}
    return entry


def requests_document(entries: Iterable[dict]) -> bytes:
    return (json.dumps({"format": FORMAT, "requests": list(entries)}, indent=1) + "\n").encode()


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((schemas_dir() / "proactive-requests.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def read_requests(path: Path) -> dict[tuple[str, int], dict]:
    """(session id, suggestion id) -> entry. Raises RequestsFileError naming the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RequestsFileError(f"{path}: not readable as JSON ({exc}). Fix: export it again "
                                "with `study export STUDY --format proactive`.") from None  # fmt: skip
    error = next(iter(sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "(top)"
        raise RequestsFileError(f"{path}: {where.lstrip('.')}: {error.message} "
                                "(schemas/proactive-requests.schema.json)")  # fmt: skip
    return {(entry["session_id"], entry["suggestion_id"]): entry for entry in data["requests"]}


def find_requests(paths: Iterable[str | Path]) -> list[Path]:
    """The requests files beside the given session files or in the given folders (and their
    `sessions/` parent, as a release lays them out)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        folder = path if path.is_dir() else path.parent
        for candidate in (folder / FILE_NAME, folder.parent / FILE_NAME):
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
                break
    return found
