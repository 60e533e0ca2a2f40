"""Quill Delta operations applied to plain text (the `textDelta` of CoAuthor events).

A delta is a list of ops walked from position 0: `retain n` skips n characters, `insert s`
inserts s, `delete n` removes n characters. Formatting `attributes` are ignored: the logs are
plain text. A delta may start without a retain, which means an edit at position 0.

Positions count UTF-16 code units, as JavaScript strings (and so Quill and our editor) do: an
emoji or any other character outside the Basic Multilingual Plane counts twice. Text without
such characters (almost all of it) takes a fast path where code units are code points.
"""

from __future__ import annotations

from typing import Iterable, Mapping


class DeltaError(ValueError):
    pass


def _is_bmp(text: str) -> bool:
    return text.isascii() or all(ord(char) <= 0xFFFF for char in text)


def apply_ops(text: str, ops: Iterable[Mapping]) -> str:
    ops = list(ops)
    if _is_bmp(text) and all(_is_bmp(op.get("insert", "")) for op in ops if "insert" in op):
        return _apply(text, ops)
    # Work on UTF-16 code units: two bytes each in UTF-16-LE.
    units = _apply(_Utf16(text), [_to_units(op) for op in ops])
    return units.decode()


def _to_units(op: Mapping) -> Mapping:
    if isinstance(op.get("insert"), str):
        return {**op, "insert": _Utf16(op["insert"])}
    return op


class _Utf16:
    """A string seen as UTF-16 code units, with the slicing and joining _apply needs."""

    def __init__(self, text: str = "", data: bytes | None = None) -> None:
        self.data = text.encode("utf-16-le", "surrogatepass") if data is None else data

    def __len__(self) -> int:
        return len(self.data) // 2

    def __getitem__(self, item: slice) -> "_Utf16":
        start, stop, _ = item.indices(len(self))
        return _Utf16(data=self.data[2 * start : 2 * stop])

    def join(self, pieces: list["_Utf16"]) -> "_Utf16":
        return _Utf16(data=b"".join(piece.data for piece in pieces))

    def decode(self) -> str:
        return self.data.decode("utf-16-le", "surrogatepass")


def _apply(text, ops: Iterable[Mapping]):
    pieces: list = []
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
    return "".join(pieces) if isinstance(text, str) else _Utf16().join(pieces)


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
