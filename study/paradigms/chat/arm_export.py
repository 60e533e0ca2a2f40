"""A chat arm's conversations in `study export` (issue 27 item 2): the editor's log of a chat
arm's session is exported as every writing session's (CoAuthor 2021 format, metadata.csv
naming its condition and `paradigm` = "chat"), and its conversation beside it, one JSON line
per session in `chat-arm-conversations.jsonl`:

    {"session_id": ..., "condition": ..., "paradigm": "chat", "model": ..., "system_prompt": ...,
     "messages": [{"seq", "role", "content", "created_at", "model"}]}

so each arm keeps its own format and every file names its arm. `model` (the name asked for)
and `system_prompt` are what the replies were sent with (study.paradigms.chat.sent_with; null
when nothing stored says), each message's `model` the one the endpoint said answered. The chat paradigm's
`coauthor_log` hook (study.paradigms.base): `files_beside`, and `counts_suggestions` (a chat
arm's writer had no Tab list: its metadata's suggestion counts are not applicable).
"""

from __future__ import annotations

import json

from study.export import as_run
from study.paradigms.chat import arm

FILE = "chat-arm-conversations.jsonl"


def conversations(study, connection, sessions: list[dict]) -> bytes | None:
    """The file's bytes for the chat-arm sessions among `sessions`, or None when there are none."""
    from study.paradigms.chat import store as chat_store  # see `assistant_texts`
    from study.paradigms.chat.sent_with import sent_with

    lines = []
    for session in sessions:
        # As the session ran: study.toml may name another paradigm for the arm now (study.export.as_run).
        condition = as_run.condition_as_run(study, session)
        if not arm.is_chat_arm(condition):
            continue
        messages = [
            {"seq": m["seq"], "role": m["role"], "content": m["content"],
             "created_at": m["created_at"], "model": m["model"]}
            for m in chat_store.messages(connection, session["session_id"])
        ]  # fmt: skip
        lines.append(json.dumps({"session_id": session["session_id"], "condition": condition.name,
                                 "paradigm": arm.CHAT_ARM, **sent_with(connection, session["session_id"]),
                                 "messages": messages}))  # fmt: skip
    return "".join(line + "\n" for line in lines).encode("utf-8") if lines else None


def files_beside(study, connection, sessions: list[dict]) -> dict[str, bytes]:
    """What `study export` writes beside the CoAuthor logs of `sessions`: their chat arms'
    conversations, if any."""
    found = conversations(study, connection, sessions)
    return {FILE: found} if found is not None else {}


def arm_card(study, condition) -> str | None:
    if not arm.is_chat_arm(condition):
        return None
    # The release carries the conversations beside the logs (study.paradigms.chat.release).
    return ("a chat assistant in a panel beside the editor, which the writer asks; nothing is "
            "inserted for them and there is no Tab list. The conversations are in "
            "`conversations.jsonl`, under the session's id; in the editor's log a reply the writer "
            "pasted is an insert like any paste.")


def counts_suggestions(condition) -> bool:
    return not arm.is_chat_arm(condition)


def assistant_texts(connection, session_id: str) -> list[str]:
    """The replies a chat arm showed this writer: pasted into the text, they are the assistant's,
    not text from outside (study.review.evidence, study.curation.origin)."""
    # Imported here: `study curate` reads this module's hooks in every worker, and the chat
    # store's imports (the study database's) cost each of them 0.3 s of CPU.
    from study.paradigms.chat import store as chat_store

    return [m["content"] for m in chat_store.messages(connection, session_id) if m["role"] == "assistant"]
