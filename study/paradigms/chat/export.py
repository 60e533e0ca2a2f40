"""`study export DIR --format chat`: chat sessions as `conversations.jsonl`, one conversation
per line in the format of `schemas/chat-conversation.schema.json` (messages with times, the
periodic ratings by exchange, the final survey, intent, pre-writing notes, the assigned arm and
the chat page's event log), plus `survey.csv` and `surveys.json` (study.export.surveys).
Written to a temporary name and renamed, so an interrupted export leaves no half file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from study.paradigms.chat.assign import label
from study.config import ConfigError, Study
from study.export.surveys import export_surveys
from study.paradigms.chat import store as chat_store
from study.paradigms.chat.sent_with import sent_with
from study.store import events as event_store
from study.store import create_tables, make_engine, reading
from study.store import sessions as session_store
from study.store import simulated as simulated_store
from study.store import surveys as survey_store
from study.store.chat_tables import chat_events
from study.store.permissions import private_folder, write_private

FORMAT = "study-chat-1"
SIMULATION = ("end_reason", "goal_source", "goal_document", "first_wish_to_end", "last_thought")
TIMES = ("assigned_at", "intent_at", "prewriting_at", "chat_started_at", "chat_finished_at")


@dataclass(frozen=True)
class ChatExportSummary:
    conversations: int
    messages: int


def conversation(study: Study, connection, session: dict) -> dict | None:
    """One session as a conversation record, or None if it never reached the chat study."""
    session_id = session["session_id"]
    chat = chat_store.get(connection, session_id)
    if chat is None or not session["condition"]:
        return None
    condition = study.condition(session["condition"])
    intent = study.chat.intent(chat["intent"]) if chat["intent"] else None
    responses = survey_store.for_session(connection, session_id)
    messages = chat_store.messages(connection, session_id)
    windows = chat_store.reply_windows(connection, session_id)
    simulated = session_id in simulated_store.simulated_ids(connection)
    run = simulated_store.conversations(connection).get(session_id) if simulated else None
    extra = {"simulation": {key: run[key] for key in SIMULATION}} if run else {}
    return {
        "format": FORMAT,
        "session_id": session_id,
        "finished": session["stage"] == "complete",
        # Written by `study simulate` (study.store.simulated), never a person's: as metadata.csv says.
        "simulated": simulated,
        **extra,
        # As its replies were sent (sent_with), null where nothing stored says: not study.toml's.
        "assistant": {"condition": condition.name, "label": label(study, condition.name),
                      **sent_with(connection, session_id),
                      # The name asked for above; here what the endpoint said answered (issue 20).
                      "answered_models": sorted({m["model"] for m in messages if m["role"] == "assistant" and m["model"]}),
                      "context_chars": study.chat.context_chars},
        "document_type": chat["document_type"],
        "offered_intents": chat["offered"],
        "intent": {"key": intent.key, "title": intent.title, "description": intent.description} if intent else None,
        "prewriting": chat["prewriting"] or [],
        "messages": [
            {"seq": m["seq"], "role": m["role"], "content": m["content"], "timestamp": m["created_at"],
             "model": m["model"], "latency_ms": m["latency_ms"],
             **({"context": windows[m["seq"]]} if m["seq"] in windows else {})}
            for m in messages
        ],
        "ratings": [
            {"survey": r["survey"], "after_exchange": r["occasion"], "answers": r["answers"],
             "submitted_at": r["submitted_at"]}
            for r in responses if r["placement"] == "in_session"
        ],
        "surveys": {r["survey"]: r["answers"] for r in responses if r["placement"] != "in_session"},
        "document": chat["document"] or chat_store.document_from_events(connection, session_id)[0],
        "timing": {"created_at": session["created_at"], **{k: chat[k] for k in TIMES},
                   "completed_at": session["completed_at"]},
        "events": event_store.records(connection, session_id, chat_events),
    }  # fmt: skip


def export_chat(study: Study, out: Path, *, include_unfinished: bool = False) -> ChatExportSummary:
    if study.chat is None:
        raise ValueError(f"{study.directory}: not a chat study (no [chat] table); use --format coauthor")
    engine = make_engine(study.database_url)
    create_tables(engine)  # a database an earlier version made: the columns read below
    lines, ids, messages = [], [], 0
    with reading(engine) as connection:
        chosen = [s for s in session_store.all_sessions(connection) if include_unfinished or s["stage"] == "complete"]
        problems = stored_names_gone(study, connection, chosen)
    if problems:  # before anything is written: an export that stopped halfway looked finished
        engine.dispose()
        raise ConfigError(problems)
    private_folder(out)  # worker ids and every message: study.store.permissions
    with reading(engine) as connection:
        for session in chosen:
            record = conversation(study, connection, session)
            if record is None:
                continue
            lines.append(json.dumps(record, ensure_ascii=False))
            ids.append(session["session_id"])
            messages += len(record["messages"])
        files = export_surveys(study, connection, ids)
    engine.dispose()
    files["conversations.jsonl"] = "".join(line + "\n" for line in lines).encode("utf-8")
    for name, data in files.items():
        write_private(out / name, data)
    return ChatExportSummary(conversations=len(lines), messages=messages)


def stored_names_gone(study: Study, connection, sessions: list[dict]) -> str:
    """Why these sessions cannot be exported, or "": an arm or an intent they were given that
    study.toml or its intent bank no longer has (renamed or removed since)."""
    source = study.directory / "study.toml"
    arms = {c.name for c in study.conditions}
    intents = {i.key for i in study.chat.intents}
    gone: dict[tuple[str, str], int] = {}
    for session in sessions:
        chat = chat_store.get(connection, session["session_id"]) if session["condition"] else None
        if chat is None:
            continue  # never reached the chat: not exported
        if session["condition"] not in arms:
            gone[("condition", session["condition"])] = gone.get(("condition", session["condition"]), 0) + 1
        if chat["intent"] and chat["intent"] not in intents:
            gone[("intent", chat["intent"])] = gone.get(("intent", chat["intent"]), 0) + 1
    problems = []
    for (what, name), count in sorted(gone.items()):
        if what == "condition":
            problems.append(f"{source}: conditions: no entry with name = '{name}', which {count} stored session(s) "
                            "use. Fix: restore that [[conditions]] entry (a renamed one keeps its old name); "
                            "sessions already stored keep the name they were given.")  # fmt: skip
        else:
            problems.append(f"{source}: chat.intent_bank: no intent '{name}', which {count} stored session(s) were "
                            "given. Fix: restore it in the intent bank (a reworded one keeps its type and index).")  # fmt: skip
    return "\n".join(problems)


def export(study: Study, out: Path, *, include_unfinished: bool = False) -> str:
    """`study export --format chat` (study.paradigms.base.Paradigm.exports): the line it prints."""
    result = export_chat(study, out, include_unfinished=include_unfinished)
    return f"Exported {result.conversations} conversations ({result.messages} messages) to {out}"
