"""What the core's editor page needs for a chat arm (study.paradigms.base.Paradigm.editor): the
panel beside a writing study's editor (static/editor-chat.js, study.paradigms.chat.arm)."""

from __future__ import annotations

from flask import url_for

from study.paradigms.chat import arm as chat_arm


def boot(study, condition, session_id: str) -> dict:
    if not chat_arm.is_chat_arm(condition):
        return {}
    return {"chat": {"url": url_for("chat_arm_api.send", session_id=session_id),
                     "maxMessageChars": chat_arm.MAX_MESSAGE_CHARS}}
