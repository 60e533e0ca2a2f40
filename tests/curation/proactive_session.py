"""A scripted proactive session log (schemas/coauthor-proactive.schema.json) for tests."""

from __future__ import annotations

from tests.curation.conftest import ops, record


class Script:
    """Builds a session the way editor-proactive.js logs one; `text` is the document."""

    def __init__(self, prompt: str = "Write about snow.\n", paradigm: str = "L1") -> None:
        self.paradigm = paradigm
        self.text = prompt
        self.events: list[dict] = []
        self.time = 1_000_000
        self.add(record("system-initialize", "api", currentDoc=prompt, currentCursor=len(prompt) - 1))

    @property
    def end(self) -> int:
        return len(self.text) - 1  # before Quill's final newline

    def add(self, event: dict, **extension) -> dict:
        event["eventNum"] = len(self.events)
        event["eventTimestamp"] = self.time
        event["proactive"] = {"paradigm": self.paradigm, **extension}
        self.time += 1000
        self.events.append(event)
        return event

    def wait(self, seconds: float) -> Script:
        self.time += int(seconds * 1000)
        return self

    def edit(self, index: int, insert: str = "", delete: int = 0, source: str = "user", **extension) -> Script:
        parts = ([{"retain": index}] if index else []) + ([{"insert": insert}] if insert else [])
        parts += [{"delete": delete}] if delete else []
        name = "text-insert" if insert else "text-delete"
        self.text = self.text[:index] + insert + self.text[index + delete :]
        self.add(record(name, source, delta=ops(*parts), currentCursor=index + len(insert)), **extension)
        return self

    def type(self, text: str) -> Script:
        return self.edit(self.end, insert=text)

    def suggest(self, sid: int, text: str, outcome: str = "accept", stage=None) -> Script:
        """outcome: accept, partial (first word, then reject by typing), esc, typed, stale."""
        self.add(record("suggestion-get", "api"), trigger="idle", idleMs=2000, stage=stage)
        if outcome == "stale":
            self.add(record("suggestion-stale", "api"), suggestionId=sid)
            return self
        item = {"index": 0, "original": text, "trimmed": text.strip(), "probability": None}
        self.add(record("suggestion-open", "api", currentSuggestions=[item]), suggestionId=sid,
                 strategy="L1", stage=stage, maxTokens=30)
        if outcome == "accept":
            self.add(record("suggestion-select"), suggestionId=sid, partial=False)
            self.add(record("suggestion-close", "api"), suggestionId=sid, closeReason="accept")
            start = self.end
            self.edit(start, insert=text, source="api", suggestionId=sid, partial=False,
                      span={"index": start, "length": len(text)})
        elif outcome == "partial":
            word = " " + text.split()[0]
            self.add(record("suggestion-select"), suggestionId=sid, partial=True)
            start = self.end
            self.edit(start, insert=word, source="api", suggestionId=sid, partial=True,
                      span={"index": start, "length": len(word)})
            self.add(record("suggestion-close"), suggestionId=sid, closeReason="typed")
        else:
            self.add(record("suggestion-close"), suggestionId=sid, closeReason=outcome)
        return self

    def modify(self, sid: int, index: int, length: int) -> Script:
        self.add(record("suggestion-modify", "api"), suggestionId=sid,
                 span={"index": index, "length": length}, text=self.text[index : index + length])
        return self
