"""Inject personal data into real CoAuthor sessions, as a writer's browser would have logged it.

Every helper appends events with the session's own control values and numbers them like the
release (eventNum = line order), so the result is a valid session that replays.
"""

from __future__ import annotations

import copy

from study.curation.replay import replay

CONTROLS = (
    "currentN",
    "currentMaxToken",
    "currentTemperature",
    "currentTopP",
    "currentPresencePenalty",
    "currentFrequencyPenalty",
)


class Writer:
    """Appends events to a session: typing, deleting, pasting and accepting suggestions."""

    def __init__(self, events: list[dict]) -> None:
        self.events = copy.deepcopy(events)
        self.text = replay(self.events).text
        self.clock = max(e["eventTimestamp"] for e in self.events)

    def _event(self, name: str, source: str, *, ops=None, cursor: int = 0, suggestions=()) -> dict:
        self.clock += 150
        last = self.events[-1]
        record = {
            "eventName": name, "eventSource": source, "eventTimestamp": self.clock,
            "textDelta": {"ops": ops} if ops else "", "cursorRange": "", "currentDoc": "",
            "currentCursor": cursor, "currentSuggestions": list(suggestions),
            "currentSuggestionIndex": 0, "currentHoverIndex": "",
            **{key: last[key] for key in CONTROLS},
        }  # fmt: skip
        if "eventNum" in last:
            record["eventNum"] = len(self.events)
        else:  # the later interface
            record["originalSuggestions"] = list(suggestions)
        self.events.append(record)
        return record

    @property
    def end(self) -> int:
        """The writing position at the end: before Quill's final newline."""
        return len(self.text) - 1

    def _ops(self, position: int, op: dict) -> list[dict]:
        return ([{"retain": position}] if position else []) + [op]

    def type(self, text: str, at: int | None = None) -> int:
        """Type `text` one key at a time at `at` (default: the end); returns the end position."""
        position = self.end if at is None else at
        for character in text:
            self.text = self.text[:position] + character + self.text[position:]
            position += 1
            self._event(
                "text-insert",
                "user",
                ops=self._ops(position - 1, {"insert": character}),
                cursor=position,
            )
        return position

    def backspace(self, count: int, at: int) -> int:
        """Press backspace `count` times with the cursor at `at`; returns the new position."""
        position = at
        for _ in range(count):
            position -= 1
            self.text = self.text[:position] + self.text[position + 1 :]
            self._event(
                "text-delete", "user", ops=self._ops(position, {"delete": 1}), cursor=position
            )
        return position

    def paste(self, text: str, at: int | None = None, attributes: dict | None = None) -> None:
        """Paste `text`, with the formatting Quill keeps from the source if any (`{"link": ...}`)."""
        position = self.end if at is None else at
        self.text = self.text[:position] + text + self.text[position:]
        op = {"insert": text, "attributes": attributes} if attributes else {"insert": text}
        self._event("text-insert", "user", ops=self._ops(position, op), cursor=position + len(text))

    def accept(self, suggestions: list[str], chosen: int) -> None:
        """Ask for suggestions, get `suggestions`, and accept one (appended at the end)."""
        items = [
            {"index": i, "original": s, "trimmed": s.strip(), "probability": 0.01 * (i + 1)}
            for i, s in enumerate(suggestions)
        ]
        position = self.end
        self._event("suggestion-get", "user", cursor=position)
        self._event("suggestion-open", "api", cursor=position, suggestions=items)
        self._event("suggestion-select", "user", cursor=position)
        self._event("suggestion-close", "api", cursor=position)
        text = suggestions[chosen]
        self.text = self.text[:position] + text + self.text[position:]
        self._event(
            "text-insert",
            "api",
            ops=self._ops(position, {"insert": text}),
            cursor=position + len(text),
        )
