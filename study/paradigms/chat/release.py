"""What `study release build` publishes of the chat paradigm's sessions (the `release` hook,
study.paradigms.base): one conversation record per session, which the release redacts, keys
and writes to `conversations.jsonl` (study.release.conversations,
schemas/chat-release.schema.json).

- A chat study's session (CollabLLM's document creation): its whole conversation record as
  `study export --format chat` writes it (schemas/chat-conversation.schema.json): the messages,
  the document and its pane's log, the intent, the notes, the ratings and the surveys.
- A chat arm's session of a writing study: the conversation of the panel beside the editor,
  whose log the release carries as every arm's (sessions/<session_id>.jsonl); the messages in
  the chat study's shape, so one file and one schema hold both, with the model and system
  prompt its replies were sent with (study.paradigms.chat.sent_with).
"""

from __future__ import annotations

from study.export import as_run
from study.paradigms.chat import arm, export

ARM_FORMAT = "study-chat-arm-1"


def arm_as_run(study, condition) -> dict:
    """A chat assistant's settings as its replies ran: one reply (no list of `n`, not cut to a
    `unit`) of at most [chat] max_tokens (a chat arm: arm.MAX_TOKENS), whatever the condition's
    Tab settings say, so that arms.json and the card do not describe a Tab list nobody saw; {}
    for another arm."""
    if study.chat is not None:  # a chat study: every condition is an assistant on its path
        max_tokens = study.chat.max_tokens
    elif arm.is_chat_arm(condition):
        max_tokens = arm.MAX_TOKENS
    else:
        return {}
    return {"paradigm": arm.CHAT_ARM, "mode": "chat", "n": 1, "max_tokens": max_tokens, "unit": None}


def conversations(study, connection, sessions: list[dict]) -> list[dict]:
    """The records of `sessions` (the finished, confirmed sessions the release may carry)
    that had a conversation, keyed by the study's session ids."""
    from study.paradigms.chat import store as chat_store  # the study database's imports
    from study.paradigms.chat.sent_with import sent_with
    from study.store.simulated import simulated_ids

    simulated = simulated_ids(connection)
    records = []
    for session in sessions:
        if study.chat is not None:  # a chat study: every session is on the chat path
            record = export.conversation(study, connection, session)
            if record is not None:
                records.append(record)
            continue
        # The paradigm the session ran with: an arm changed to Tab lists under its name since
        # keeps the conversations its chat sessions had (study.export.as_run).
        condition = as_run.condition_as_run(study, session) if session["condition"] else None
        if condition is None or not arm.is_chat_arm(condition):
            continue
        messages = [
            {"seq": m["seq"], "role": m["role"], "content": m["content"], "timestamp": m["created_at"],
             "model": m["model"]}
            for m in chat_store.messages(connection, session["session_id"])
        ]  # fmt: skip
        if not messages:  # the writer never asked the panel: nothing to publish beside the log
            continue
        # Marked as its log's metadata.csv row is, so the file alone tells a simulated writer's.
        records.append({"format": ARM_FORMAT, "session_id": session["session_id"], "condition": condition.name,
                        "simulated": session["session_id"] in simulated,
                        **sent_with(connection, session["session_id"]), "messages": messages})  # fmt: skip
    return records
