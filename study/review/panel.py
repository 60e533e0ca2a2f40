"""The assistant panel's conversation of an L0 session, as a reviewer reads it beside the text.

MindCopilot's user-initiated paradigm (L0, `[proactive] l0 = "assistant"`) gives the writer a
panel to ask the model in; its requests and responses live in the session's own log
(schemas/coauthor-proactive.schema.json): `chat-send` (the writer's request), `chat-receive`
(the response, with its `chatId`), `chat-copy` (what the writer selected and copied from a
response), and a `suggestion-fail` while a request waits (no response came). Text reaches the
document only by the writer's own text-insert, which names the response's `chatId` when it was
pasted from it or put in with Insert at cursor.

A reviewer judging whether the text is the writer's own needs the conversation: a sentence the
panel wrote reads as the writer's unless one sees it there. So each response carries what of it
the writer copied or put into the text (`used`), to be marked. Pure: the (redacted) log in, the
messages out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from study.curation.suggestions import inserted_text

WRITER, ASSISTANT, FAILED = "writer", "assistant", "failed"


@dataclass
class Message:
    """One message of the panel: the writer's request, the assistant's response, or a request
    that got none. `t`: milliseconds since the session began, as the replay counts them."""

    t: int
    role: str
    text: str
    chat_id: int | None = None
    copies: int = 0  # times the writer copied from this response (chat-copy)
    inserts: int = 0  # times text of it went into the document (a text-insert with its chatId)
    used: list[str] = field(default_factory=list)  # the texts copied or put in, to mark

    def pieces(self) -> list[tuple[str, bool]]:
        """The text in runs of (text, used): a used run was copied from it or put into the
        document (each used text at its first place in the response)."""
        marked = [False] * len(self.text)
        for used in self.used:
            at = self.text.find(used.strip()) if used.strip() else -1
            if at >= 0:
                marked[at : at + len(used.strip())] = [True] * len(used.strip())
        runs: list[tuple[str, bool]] = []
        for character, flag in zip(self.text, marked):
            if runs and runs[-1][1] == flag:
                runs[-1] = (runs[-1][0] + character, flag)
            else:
                runs.append((character, flag))
        return runs


def conversation(events: Sequence[Mapping]) -> list[Message]:
    """The panel's messages in the order the writer saw them; [] for a session without one."""
    start = _ms(events[0]) if events else 0
    messages: list[Message] = []
    responses: dict[int, Message] = {}
    waiting = False  # a request sent and not yet answered
    for event in events:
        name = event.get("eventName")
        extension = event.get("proactive")
        extension = extension if isinstance(extension, Mapping) else {}
        t = max(_ms(event) - start, 0)
        text = extension.get("text") if isinstance(extension.get("text"), str) else ""
        chat_id = extension.get("chatId") if type(extension.get("chatId")) is int else None
        if name == "chat-send":
            messages.append(Message(t, WRITER, text))
            waiting = True
        elif name == "chat-receive":
            message = Message(t, ASSISTANT, text, chat_id)
            messages.append(message)
            if chat_id is not None:
                responses[chat_id] = message
            waiting = False
        elif name == "suggestion-fail" and waiting:
            reason = extension.get("reason") if isinstance(extension.get("reason"), str) else ""
            messages.append(Message(t, FAILED, reason or "no response"))
            waiting = False
        elif name == "chat-copy" and chat_id in responses:
            responses[chat_id].copies += 1
            responses[chat_id].used.append(text)
        elif name == "text-insert" and chat_id in responses:
            responses[chat_id].inserts += 1
            responses[chat_id].used.append(inserted_text(event))
    return messages


def _ms(event: Mapping) -> int:
    value = event.get("eventTimestamp")
    return value if type(value) is int else 0
