"""Chat as an arm of a writing study (issue 27 item 2): a condition with `paradigm = "chat"`.

The writer writes on the study's prompt in the same editor, with the same log, timer, surveys
and completion as every other arm, and has a chat assistant in a panel beside it (RealHumanEval's
chat arm; MindCopilot's "passive collaboration", Fig. 1 left). No Tab suggestions: text reaches
the document only by the writer's own typing or paste, so the CoAuthor log of the editor is as
in a control arm, and the conversation is kept beside it (study.paradigms.chat.store, the chat study's
messages table). A study with a `[chat]` table is CollabLLM's document-creation study instead
(study.paradigms.chat.config), with its own path.

This module imports nothing of the toolkit, so the configuration, server and exports may use it.
"""

from __future__ import annotations

CHAT_ARM = "chat"  # the value of a condition's `paradigm` in study.toml
# CollabLLM's defaults ([chat] max_message_chars, max_tokens), for a study without [chat].
MAX_MESSAGE_CHARS = 4000
MAX_TOKENS = 512


def is_chat_arm(condition) -> bool:
    return getattr(condition, "paradigm", None) == CHAT_ARM


def config_problems(conditions: list, source, chat_study: bool) -> list[str]:
    """What is wrong with a study.toml's chat arms: a chat study's conditions are all
    assistants already, so `paradigm = "chat"` belongs to writing studies."""
    if not chat_study:
        return []
    return [
        f"{source}: conditions[{i}]: paradigm = \"{CHAT_ARM}\" makes a chat arm of a writing "
        "study; in a study with a [chat] table every condition is a chat assistant already. "
        "Fix: remove the paradigm key, or the [chat] table for a writing study with a chat arm."
        for i, condition in enumerate(conditions) if condition.get("paradigm") == CHAT_ARM
    ]
