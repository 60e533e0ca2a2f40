"""What a conversation's replies were sent with: the model asked for and the system prompt, as
each reply's model call recorded them (study.paradigms.chat.assistant.call_parameters).

The export (`assistant` of schemas/chat-conversation.schema.json), a chat arm's conversations
beside a writing study's logs and a release's conversations.jsonl all read them here, never
from study.toml: a researcher who edits an assistant's prompt or swaps its model under its name
mid-study would otherwise have the earlier conversations credited with today's. None where
nothing stored says: a conversation with no reply, or whose replies were made before the
system prompt was recorded with each call.
"""

from __future__ import annotations

from study.store import provenance

MODE = "chat_reply"  # the mode a reply's call records (assistant.call_parameters)


def model(connection, session_id: str) -> str | None:
    """The models the replies asked for, as one cell ("a; b" when swapped mid-conversation)."""
    return provenance.cell(sorted(provenance.sent(connection, session_id, "model", MODE))) or None


def system_prompt(connection, session_id: str) -> str | list[str] | None:
    """The system prompt the replies were sent with; all of them, in the order first sent, when
    it changed during the conversation (a server restarted with an edited study.toml)."""
    prompts = provenance.sent(connection, session_id, "system_prompt", MODE)
    return None if not prompts else prompts[0] if len(prompts) == 1 else prompts


def sent_with(connection, session_id: str) -> dict:
    """{"model": ..., "system_prompt": ...} of the session's replies (None: not recorded)."""
    return {"model": model(connection, session_id), "system_prompt": system_prompt(connection, session_id)}
