"""The document during a redactor's replay, with the origin of each character (study.release.redaction).

An entity typed key by key is never whole in any one field of a log, only in the document as it
stood at some moment: to mask it where it was written, the redactor must know, for every
character of the document, which insert (event, op, offset) put it there.
"""

from __future__ import annotations

import bisect
from typing import Mapping, Sequence

from study.curation.quote import quote
from study.curation.replay import EMBED, DeltaError, is_embed


class DocumentOrigins:
    """The document during replay, with the origin of each character.

    Origins are integers handed out in insertion order; `segments` maps the first origin of each
    insert back to (event index, op index), op index -1 being `currentDoc`.
    """

    def __init__(self) -> None:
        self.text = ""
        self.origin: list[int] = []
        self.starts: list[int] = []
        self.segments: list[tuple[int, int, str]] = []  # (event, op, inserted text)
        self.next_id = 0

    def _new(self, event: int, op: int, text: str) -> list[int]:
        self.starts.append(self.next_id)
        self.segments.append((event, op, text))
        ids = list(range(self.next_id, self.next_id + len(text)))
        self.next_id += len(text)
        return ids

    def reset(self, event: int, text: str) -> None:
        self.text = text
        self.origin = self._new(event, -1, text)

    def apply(self, event: int, ops: Sequence[Mapping]) -> list[tuple[int, int]]:
        """Apply a delta; returns the (start, end) ranges it touched in the new text."""
        position, touched = 0, []
        for number, op in enumerate(ops):
            if not isinstance(op, Mapping):
                raise DeltaError(f"ops[{number}]", f"must be an object (event {event})")
            if "insert" in op:
                value = op["insert"]
                if not isinstance(value, str):
                    if not is_embed(value):
                        raise DeltaError(f"ops[{number}].insert", f"is not text (event {event})")
                    value = EMBED  # one position, as in Quill; a pasted image carries no text
                self.text = self.text[:position] + value + self.text[position:]
                self.origin[position:position] = self._new(event, number, value)
                touched.append((position, position + len(value)))
                position += len(value)
            elif "retain" in op or "delete" in op:
                key = "retain" if "retain" in op else "delete"
                count = op[key]
                if type(count) is not int or count < 0 or position + count > len(self.text):
                    raise DeltaError(
                        f"ops[{number}].{key}",
                        f"cannot apply {quote(count)} at {position} (event {event})",
                    )
                if key == "retain":
                    position += count
                else:
                    self.text = self.text[:position] + self.text[position + count :]
                    del self.origin[position : position + count]
                    touched.append((position, position))
        return touched

    def locate(self, origin: int) -> tuple[int, int, int]:
        """(event, op, offset) of the insert that put character `origin` in the document."""
        index = bisect.bisect_right(self.starts, origin) - 1
        event, op, _ = self.segments[index]
        return event, op, origin - self.starts[index]

    def inserted(self, event: int, op: int) -> str:
        """The text that (event, op) inserted (op -1: the event's currentDoc)."""
        for segment_event, segment_op, text in self.segments:
            if (segment_event, segment_op) == (event, op):
                return text
        raise KeyError((event, op))
