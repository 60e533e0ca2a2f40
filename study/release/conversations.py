"""A release's conversations: `conversations.jsonl`, one per line (schemas/chat-release.schema.json).

The conversations of a chat study's sessions (CollabLLM's document creation, which has no
editor log) and of a writing study's chat arm (beside the session's log in sessions/) are
another data file of the same release (study.release.build), with the same guarantees as the
logs: only confirmed participants, no withdrawn writer, keyed ids, redaction, leak scan.

- **Keys.** `session_id` is the released id (the log's, for a chat arm), and `worker_id` the
  writer's pseudonym, added because a chat study has no metadata.csv row to name the writer.
- **Redaction.** The document pane's log (`events`) is redacted as a session log is
  (`study.release.redaction`): its text is typed one key at a time, so only a replay sees an
  e-mail address whole. Every other string (each message, the final document, the notes, the
  survey and rating answers, a failed reply's `detail`) is redacted as a text of its own.
  Structural strings (`STRUCTURAL`) are not text anyone wrote and are kept.
- **Checks.** `texts` and `events` give the leak scan (study.release.leakscan) the same text
  the redaction read; `problems` is `study release verify`'s check of the file against its
  schema; `digests` and `writers` are what `study release diff` and the version rules compare.

Lines are sorted by released id and written with the same `json.dumps` every time, so a build
from the same source and key writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Callable, Iterator

from study.release.layout import CONVERSATIONS, SESSIONS
from study.release.pii import Detector, redact_text
from study.release.redaction import redact_session
from study.release.redaction_report import Redaction, span_redactions

SCHEMA = "chat-release.schema.json"
SCHEMAS = ("chat-conversation.schema.json", SCHEMA)  # what the release's schemas/ carries for it
# Keys whose string values are names the toolkit wrote, not text: redacting them could only
# break the record. `textDelta` is the pane's log, which the replay redacts.
STRUCTURAL = frozenset({"format", "session_id", "worker_id", "role", "eventName", "eventSource", "textDelta"})
WHERE = "conversation"  # how the curator's redaction report names the place (redaction_report.place)


@dataclass
class Written:
    """What the build learns writing the file, for the card, the CHANGELOG and datapackage.json."""

    conversations: int = 0
    messages: int = 0
    simulated: int = 0  # written by `study simulate`'s chat user, not a person
    writers: set[str] = field(default_factory=set)
    first_ms: list[int] = field(default_factory=list)
    last_ms: list[int] = field(default_factory=list)
    redactions: list[Redaction] = field(default_factory=list)


def write(path: Path, conversations, released: dict[str, str], alias: Callable[[str], str],
          detector: Detector) -> Written:  # fmt: skip
    """Redact and key each conversation (study.release.source.SourceConversation) and write them,
    sorted by released id. A pane's log that does not replay is a ValueError naming the session."""
    written, lines = Written(), []
    for conversation in conversations:
        record, redactions = redact(conversation.record, conversation.session_id, detector)
        worker = alias(conversation.worker_id)
        lines.append((released[conversation.session_id], keyed(record, released[conversation.session_id], worker)))
        written.redactions += redactions
        written.writers.add(worker)
        written.messages += len(record["messages"])
        written.simulated += record.get("simulated") is True and record["format"] == "study-chat-1"
        first, last = _span_ms(record)
        if first is not None:
            written.first_ms.append(first)
            written.last_ms.append(last)
    lines.sort(key=lambda item: item[0])
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for _, r in lines))
    written.conversations = len(lines)
    return written


def redact(record: dict, session_id: str, detector: Detector) -> tuple[dict, list[Redaction]]:
    """The record with every entity masked (see the module docstring), and what was masked."""
    redactions: list[Redaction] = []
    out = dict(record)
    if record.get("events"):
        result = redact_session(session_id, record["events"], detector)
        out["events"] = result.events
        redactions += [replace(r, where=f"{WHERE} document pane, {r.where}") for r in result.redactions]

    def redacted(where: str, text: str) -> str:
        new, spans = redact_text(text, detector)
        redactions.extend(span_redactions(session_id, f"{WHERE} {where}", text, new, spans))
        return new

    return _map_strings(out, "", redacted), redactions


def keyed(record: dict, session_id: str, worker_id: str) -> dict:
    """The record under its released id and its writer's pseudonym (those keys first)."""
    rest = {k: v for k, v in record.items() if k not in ("format", "session_id", "worker_id")}
    return {"format": record["format"], "session_id": session_id, "worker_id": worker_id, **rest}


def _map_strings(value, where: str, change: Callable[[str, str], str]):
    if isinstance(value, str):
        return change(where, value)
    if isinstance(value, dict):
        return {key: item if key in STRUCTURAL else _map_strings(item, f"{where}.{key}" if where else key, change)
                for key, item in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [_map_strings(item, f"{where}[{index}]", change) for index, item in enumerate(value)]
    return value


def texts(record: dict) -> list[tuple[str, str]]:
    """(where, text) of every string the redaction reads as a text, for the leak scan."""
    found: list[tuple[str, str]] = []
    _map_strings(record, "", lambda where, text: found.append((where, text)) or text)
    return found


def _span_ms(record: dict) -> tuple[int | None, int | None]:
    """The conversation's first and last moment (server times, seconds in the record)."""
    times = [t for t in (record.get("timing") or {}).values() if isinstance(t, (int, float))]
    times += [m["timestamp"] for m in record["messages"] if isinstance(m.get("timestamp"), (int, float))]
    if not times:
        return None, None
    return int(min(times) * 1000), int(max(times) * 1000)


# -- reading a release's file ------------------------------------------------------------------


def lines(directory: Path) -> Iterator[tuple[int, bytes, dict | None]]:
    """(line number, its bytes, the record or None when it is not a JSON object)."""
    path = directory / CONVERSATIONS
    if not path.is_file():
        return
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        yield number, line, record if isinstance(record, dict) else None


def digests(directory: Path) -> dict[str, str]:
    """released session id -> SHA-256 of its line, to tell a changed conversation."""
    return {r.get("session_id", ""): hashlib.sha256(line).hexdigest() for _, line, r in lines(directory) if r}


def writers(directory: Path) -> dict[str, str]:
    """released session id -> the writer's pseudonym."""
    return {r.get("session_id", ""): r.get("worker_id", "") for _, _, r in lines(directory) if r}


@cache
def validator():
    """The release line's schema (chat-release.schema.json, with the conversation schema it
    refers to), for `study release verify` and for `study curate chat` on a release's file."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    from study.paths import schemas_dir

    schemas = [json.loads((schemas_dir() / name).read_text(encoding="utf-8")) for name in SCHEMAS]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s, DRAFT202012)) for s in schemas)
    return Draft202012Validator(schemas[-1], registry=registry)


def problems(directory: Path) -> list[str]:
    """What is wrong with the file: a line that is not a record of its schema, a session twice,
    out of order, or a chat arm's conversation without its session's log."""
    from study.curation.schema import field_path

    found, seen, previous = [], set(), ""
    logs = {p.stem for p in (directory / SESSIONS).glob("*.jsonl")}
    for number, _, record in lines(directory):
        where = f"{CONVERSATIONS} line {number}"
        if record is None:
            found.append(f"{where}: not a JSON object")
            continue
        for error in sorted(validator().iter_errors(record), key=lambda e: list(e.absolute_path)):
            found.append(f"{where}: {field_path(error.absolute_path)}: {error.message[:200]}")
        session_id = str(record.get("session_id", ""))
        if session_id in seen:
            found.append(f"{where}: session {session_id} has a second conversation")
        elif session_id < previous:
            found.append(f"{where}: session {session_id} is out of order (lines are sorted by session_id)")
        seen.add(session_id)
        previous = max(previous, session_id)
        if record.get("format") != "study-chat-1" and session_id not in logs:
            found.append(f"{where}: a chat arm's conversation, but {SESSIONS}/{session_id}.jsonl is missing")
    return found
