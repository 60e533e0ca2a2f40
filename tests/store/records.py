"""A simulated editor: the CoAuthor records a writer's browser posts (schemas/event-batch.schema.json)."""

from __future__ import annotations

import time

from sqlalchemy import Engine, func, select

from study.store import reading
from study.store.db import events

CONTROLS = {
    "currentN": "5",
    "currentMaxToken": "30",
    "currentTemperature": "0.3",
    "currentTopP": "1",
    "currentPresencePenalty": "0",
    "currentFrequencyPenalty": "0",
}


class Editor:
    """Types into a document and numbers its events 0, 1, 2, ... as the browser does."""

    def __init__(self, prompt: str = "Once upon a time,\n") -> None:
        self.doc = ""
        self.cursor = 0
        self.seq = 0
        self.initial = prompt

    def _record(self, name: str, *, delta="", cursor_range="", doc="") -> dict:
        record = {
            "seq": self.seq,
            "eventName": name,
            "eventSource": "user" if name != "system-initialize" else "api",
            "eventTimestamp": int(time.time() * 1000),
            "textDelta": delta,
            "cursorRange": cursor_range,
            "currentDoc": doc,
            "currentCursor": self.cursor,
            "currentSuggestions": [],
            "currentSuggestionIndex": 0,
            "currentHoverIndex": "",
            **CONTROLS,
        }
        self.seq += 1
        return record

    def initialize(self) -> dict:
        self.doc = self.initial
        self.cursor = len(self.doc) - 1  # before Quill's final newline
        return self._record("system-initialize", doc=self.doc)

    def type(self, text: str) -> list[dict]:
        """One text-insert per character, as Quill reports typing."""
        records = []
        for character in text:
            ops = ([{"retain": self.cursor}] if self.cursor else []) + [{"insert": character}]
            self.doc = self.doc[: self.cursor] + character + self.doc[self.cursor :]
            self.cursor += 1
            records.append(self._record("text-insert", delta={"ops": ops}))
        return records

    def move(self, steps: int) -> dict:
        self.cursor = max(0, min(len(self.doc) - 1, self.cursor + steps))
        name = "cursor-forward" if steps > 0 else "cursor-backward"
        return self._record(name, cursor_range={"index": self.cursor, "length": 0})


def event_count(engine: Engine, session_id: str | None = None) -> int:
    """Stored events, of one session or of all."""
    query = select(func.count()).select_from(events)
    if session_id is not None:
        query = query.where(events.c.session_id == session_id)
    with reading(engine) as connection:
        return connection.execute(query).scalar_one()
