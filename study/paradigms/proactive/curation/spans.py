"""Accepted suggestions followed through later edits (spec A2.5-A2.6, A3.2's CoAuthor protocol).

An accepted suggestion is the text a `text-insert` from the api put in the document (CoAuthor:
after suggestion-select; proactive logs also name its suggestionId, and partial accepts extend
the same span). Its span is mapped through every later delta, as editor-ghost.js does in the
browser: an insert strictly inside, or a delete overlapping it, touches it (a modification);
writing on right before or after it does not. Its final text is what the span holds at the
next suggestion-get, or at the end of the session (spec A3.2 [I], the CoAuthor protocol); or,
with `window_ms`, what it holds when that long has passed since acceptance (the editor's
`modify_window_ms`: proactive suggestions come every few seconds, so "the next suggestion"
would cut a writer's edits short).

Positions are UTF-16 code units, as in the log; texts are returned as Python strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from study.curation.replay import apply_delta, from_units, to_units
from study.curation.suggestions import inserted_text


@dataclass
class TrackedSpan:
    key: object  # the suggestionId, or the accept's event index in CoAuthor logs
    text: str  # what was accepted (all pieces of a partial accept)
    start: int
    end: int
    accepted_at: int  # ms: the suggestion-select (or the insert when no select precedes)
    accepted_event: int
    touches: list[int] = field(default_factory=list)  # ms of each edit touching the span
    final: str | None = None  # set at the next suggestion-get or at the end
    open: bool = True


def map_span(start: int, end: int, position: int, inserted: int, deleted: int) -> tuple[int, int, bool]:
    """(start, end, touched) after one edit at `position` (see editor-ghost.js `mapSpan`)."""
    touched = False
    if inserted:
        if position <= start:
            start, end = start + inserted, end + inserted
        elif position < end:
            end += inserted
            touched = True
    if deleted:
        stop = position + deleted
        if stop > start and position < end:
            touched = True

        def cut(p: int) -> int:
            return p if p <= position else p - deleted if p >= stop else position

        start, end = cut(start), cut(end)
    return start, end, touched


def edits(ops: Sequence[Mapping]) -> list[tuple[int, int, int]]:
    """(position, inserted length, deleted length) per op of a delta, left to right."""
    out, position = [], 0
    for op in ops:
        if "retain" in op:
            position += op["retain"]
        elif "insert" in op and isinstance(op["insert"], str):
            length = len(to_units(op["insert"]))
            out.append((position, length, 0))
            position += length
        elif "delete" in op:
            out.append((position, 0, op["delete"]))
    return out


def track_accepted(events: Sequence[Mapping], window_ms: int | None = None) -> list[TrackedSpan]:
    """Every accepted suggestion of a session with its final text and touching edits."""
    text = to_units(events[0]["currentDoc"])
    spans: list[TrackedSpan] = []
    by_key: dict[object, TrackedSpan] = {}
    selected_at: int | None = None

    def close(before: int | None = None) -> None:
        for span in spans:
            if span.open and (before is None or span.accepted_at + window_ms < before):
                span.final = from_units(text[span.start : span.end])
                span.open = False

    for index, event in enumerate(events[1:], start=1):
        name = event.get("eventName")
        if window_ms:
            close(event["eventTimestamp"])
        elif name == "suggestion-get":
            close()
            continue
        if name == "suggestion-select":
            selected_at = event["eventTimestamp"]
            continue
        delta = event.get("textDelta")
        if not delta:
            continue
        ops = delta["ops"]
        accepted = event.get("eventSource") == "api" and name == "text-insert"
        if accepted:
            key = (event.get("proactive") or {}).get("suggestionId", index)
            (position, length, _), = [e for e in edits(ops) if e[1]][:1] or [(0, 0, 0)]
            span = by_key.get(key)
            if span is not None and span.open and span.end == position:
                span.end += length
                span.text += inserted_text(event)
            else:
                at = selected_at if selected_at is not None else event["eventTimestamp"]
                inserted = inserted_text(event)
                # Quill moves a suggestion's leading newline to its end (shared data README):
                # that newline is the paragraph break the writer goes on typing before, so it is
                # not part of the span, or writing on would count as editing the suggestion.
                kept = inserted.rstrip("\n")
                span = TrackedSpan(key, kept, position, position, at, index)
                span.end = position + length - (len(inserted) - len(kept))
                spans.append(span)
                by_key[key] = span
            for other in spans:  # the insert shifts spans after it
                if other is not span and other.open:
                    other.start, other.end, _ = map_span(other.start, other.end, position, length, 0)
            selected_at = None
        else:
            for position, inserted, deleted in edits(ops):
                for span in spans:
                    if not span.open:
                        continue
                    span.start, span.end, touched = map_span(span.start, span.end, position, inserted, deleted)
                    if touched:
                        span.touches.append(event["eventTimestamp"])
        text = apply_delta(text, ops)
    close()
    return spans
