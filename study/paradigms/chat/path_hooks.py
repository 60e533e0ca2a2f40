"""What the core asks about a session on the chat study's own path (study.paradigms.base:
`path_hooks`): the word a survey question's {noun} becomes, the exchanges in-session surveys
are placed by, the operator's notice on the path's pages, and `study status`'s line.
"""

from __future__ import annotations

from study.paradigms.chat import store as chat_store


def noun(connection, study, session: dict) -> str:
    """The session's document type, as its label reads ("blog post"); "document" before one."""
    row = chat_store.get(connection, session["session_id"])
    if row and row["document_type"]:
        return study.chat.document_type(row["document_type"]).label.lower()
    return "document"


def exchanges(connection, session_id: str) -> int:
    return chat_store.exchanges(chat_store.messages(connection, session_id))


def notice(study) -> str:
    """The operator's notice ([chat] notice or notice_file, read now): CollabLLM showed it on the
    landing page ("10x speed up")."""
    return study.chat.current_notice()


def status(connection, study) -> list[str]:
    totals = chat_store.totals(connection)
    return [f"Chat: {totals['sessions']} conversations, {totals['exchanges']} exchanges, "
            f"{totals['events']} page events stored"]  # fmt: skip


def written_chars(connection, session_id: str) -> int:
    """What review's rule 5 counts as the worker's writing (study.review.evidence): the
    characters of their own messages, since the document may rightly hold the replies."""
    return sum(len(m["content"]) for m in chat_store.messages(connection, session_id) if m["role"] == "user")
