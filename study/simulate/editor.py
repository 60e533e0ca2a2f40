"""The writing page's log, as the simulated writer's "browser" keeps it.

It builds the same CoAuthor 2021 records as study/static/editor-events.js and editor.js: the
release's keys in order plus `seq`, the six controls as strings, the two persisting indices
(currentSuggestionIndex, currentHoverIndex) carried from event to event, Quill deltas relative
to the text area (the document without Quill's final newline), and an accepted suggestion
appended at the end of the text (paper §4.2.3): suggestion-select (user), suggestion-close
(api), text-insert (api).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

CONTROL_KEYS = ("currentN", "currentMaxToken", "currentTemperature", "currentTopP",
                "currentPresencePenalty", "currentFrequencyPenalty")  # fmt: skip


def clean_suggestions(items: Sequence[Mapping]) -> list[dict]:
    """The suggestion items the schema accepts, as editor-events.js cleans them."""
    out = []
    for position, item in enumerate(items):
        index = item.get("index")
        probability = item.get("probability")
        out.append({
            "index": index if isinstance(index, int) and index >= 0 else position,
            "original": str(item.get("original") or ""),
            "trimmed": str(item.get("trimmed") or item.get("original") or "").strip(),
            "probability": probability if isinstance(probability, (int, float)) else None,
        })  # fmt: skip
    return out


class EditorLog:
    def __init__(self, prompt: str, controls: Mapping[str, str], *, clock=time.time, extension: str | None = None) -> None:
        self.controls = {key: str(controls.get(key, "")) for key in CONTROL_KEYS}
        # The key every record carries when a paradigm extends the CoAuthor record (the boot
        # data's `extension`, as editor-events.js's EventLog), filled from `details[extension]`.
        self.extension = extension
        self.text = prompt[:-1] if prompt.endswith("\n") else prompt  # the text area's value
        self.next_seq = 0
        self.suggestion_index: int = 0
        self.hover_index: int | str = ""
        self.unsent: list[dict] = []
        self.clock = clock
        self.record("system-initialize", "api", currentDoc=self.document)

    @property
    def document(self) -> str:
        return self.text + "\n"

    @property
    def last_seq(self) -> int:
        return self.next_seq - 1

    def record(self, name: str, source: str, **details) -> dict:
        record = {
            "eventName": name,
            "eventSource": source,
            "eventTimestamp": int(self.clock() * 1000),
            "textDelta": details.get("textDelta", ""),
            "cursorRange": details.get("cursorRange", ""),
            "currentDoc": details.get("currentDoc", ""),
            "currentCursor": len(self.text),  # the writer always types at the end
            "currentSuggestions": details.get("currentSuggestions", []),
            "currentSuggestionIndex": self.suggestion_index,
            "currentHoverIndex": self.hover_index,
            **self.controls,
            "seq": self.next_seq,
        }
        if self.extension:
            record[self.extension] = dict(details.get(self.extension) or {})
        self.next_seq += 1
        self.unsent.append(record)
        return record

    def _append_delta(self, addition: str) -> dict:
        ops = [{"retain": len(self.text)}] if self.text else []
        return {"ops": [*ops, {"insert": addition}]}

    def type(self, character: str) -> None:
        """One key press at the end of the text: a user text-insert."""
        delta = self._append_delta(character)
        self.text += character
        self.record("text-insert", "user", textDelta=delta)

    def paste(self, text: str, **details) -> None:
        """Text pasted at the end of the text (copied from an assistant's reply): one `input`
        event, so one user text-insert of all of it, as editor.js logs any paste (`details`: what
        a paradigm's log adds to the record, e.g. GhostLog's `proactive`). After the writer's own
        space where the text ends in none: what is pasted is the reply's text as it was."""
        if self.text and not self.text[-1].isspace():
            self.type(" ")
        self.put(text, **details)

    def put(self, text: str, **details) -> None:
        """`text` put in at the end of the text, exactly as it is, by one `input` event that is
        the writer's own act (a paste, a panel's "Insert at cursor" button): one user
        text-insert of all of it, with what the paradigm's log adds (`details`)."""
        delta = self._append_delta(text)
        self.text += text
        self.record("text-insert", "user", textDelta=delta, **details)

    def backspace(self) -> None:
        delta = {"ops": [{"retain": len(self.text) - 1}, {"delete": 1}]}
        self.text = self.text[:-1]
        self.record("text-delete", "user", textDelta=delta)

    def ask(self) -> None:
        self.record("suggestion-get", "user")

    def shown(self, items: list[dict]) -> None:
        self.suggestion_index = 0
        self.record("suggestion-open", "api", currentSuggestions=items)

    def failed(self) -> None:
        self.record("suggestion-fail", "api")

    def move_down(self) -> None:
        self.suggestion_index += 1
        self.record("suggestion-down", "user")

    def dismiss(self) -> None:
        self.record("suggestion-close", "user")

    def accept(self, item: Mapping) -> None:
        # Taken with the arrows and Enter: the select names the highlighted item in both
        # indices, as the page does (study/paradigms/tab/static/editor-tab.js, accept).
        self.hover_index = self.suggestion_index
        self.record("suggestion-select", "user")
        self.record("suggestion-close", "api")
        delta = self._append_delta(item["original"])
        self.text += item["original"]
        self.record("text-insert", "api", textDelta=delta)

    def take_unsent(self) -> list[dict]:
        batch, self.unsent = self.unsent, []
        return batch
