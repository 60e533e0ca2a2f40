"""Quill Delta operations applied to plain text (the `textDelta` of CoAuthor events).

A delta is a list of ops walked from position 0: `retain n` skips n characters, `insert s`
inserts s, `delete n` removes n characters. Formatting `attributes` are ignored: the logs are
plain text. A delta may start without a retain, which means an edit at position 0.
"""

from __future__ import annotations

from typing import Iterable, Mapping


class DeltaError(ValueError):
    pass


def apply_ops(text: str, ops: Iterable[Mapping]) -> str:
    pieces: list[str] = []
    position = 0
    for op in ops:
        if "retain" in op:
            count = op["retain"]
            if position + count > len(text):
                raise DeltaError(f"retain {count} at {position} runs past the end ({len(text)})")
            pieces.append(text[position : position + count])
            position += count
        elif "insert" in op:
            pieces.append(op["insert"])
        elif "delete" in op:
            count = op["delete"]
            if position + count > len(text):
                raise DeltaError(f"delete {count} at {position} runs past the end ({len(text)})")
            position += count
        else:
            raise DeltaError(f"unknown op {dict(op)!r}")
    pieces.append(text[position:])
    return "".join(pieces)


def replay(records: Iterable[Mapping]) -> str:
    """The document after a sequence of CoAuthor records (first one: system-initialize)."""
    text = ""
    for record in records:
        if record.get("eventName") == "system-initialize":
            text = record.get("currentDoc", "")
        delta = record.get("textDelta")
        if delta:
            text = apply_ops(text, delta["ops"])
    return text
