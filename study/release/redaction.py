"""Redact a session's log so that it stays replayable: character provenance, same-length masks.

Text reaches a CoAuthor log in pieces: the prompt (`currentDoc` of system-initialize), each
`insert` of a `textDelta` (a keystroke, a paste, an accepted suggestion) and the suggestion
lists. An email typed key by key is never whole in any single field, only in the document as it
stood at some moment. So the redactor replays the session while remembering, for every
character of the document, which insert (event, op, offset) put it there. After each event it
scans the lines that event touched (`Detector.find_in`) and, when an entity is found, marks the
characters' origins. Scanning the state after every edit sees every entity that ever stood
whole in the document, even one typed and deleted again; the final document is scanned whole.

Each marked character is then replaced, at its origin, by the character at the same position of
the entity's mask (`<EMAIL_____>`, `study.release.pii.mask`). Why same-length masks rather than
short tokens with every later `retain` and `delete` rewritten: positions are everywhere in a log
(`retain` and `delete` counts, `currentCursor`, `cursorRange`), and a same-length mask keeps
every one of them valid with nothing to rewrite. Replaying the redacted log gives the original
document with the masked characters substituted, at every event. (Masks are ASCII; an entity
with characters outside the Basic Multilingual Plane, which Quill counts twice, would shift, but
the entities recognized practically never contain any.) Where two findings disagree on a
character, a finding in the final document wins, then the longest; so the final text reads as
the redacted final text, and a character that was part of an entity at any moment stays masked
wherever it survives.

Suggestion lists are redacted as texts, except that an inserted suggestion and the list item it
came from are redacted alike (the curation core matches the two by text), and the inserted text
is also scanned on its own. The formatting `attributes` of pasted text are not document text
but may hold some (a link's target, `tel:...` or `mailto:...`): their string values are
redacted as texts of their own. So are those of a proactive session's extension
(schemas/coauthor-proactive.schema.json): the text of an accepted span as the writer edited it
(`suggestion-modify`), an L2 suggestion's `rationale` (the model's, which may quote the
document), L0's assistant panel requests and replies (`chat-send`, `chat-receive`, `chat-copy`).
A span's `text` is masked as the document is wherever an entity lies inside the span.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from study.curation.quote import quote
from study.curation.replay import EMBED, DeltaError, is_embed
from study.curation.suggestions import EXACT, STRIPPED, inserted_text, match_suggestion
from study.release.pii import Detector, Span, mask, redact_text

SUGGESTION_LISTS = ("currentSuggestions", "originalSuggestions")
EXTENSION = "proactive"  # the key of a proactive session's extension (FORMAT_PROACTIVE)
REACH = 400  # characters scanned each side of an edit
ITEM_TEXTS = ("original", "trimmed")


@dataclass(frozen=True)
class Redaction:
    """One thing the redactor replaced, for the curator's review (never part of a release)."""

    session_id: str
    where: str
    entity: str
    original: str
    replacement: str
    score: float
    recognizer: str


@dataclass
class RedactedSession:
    session_id: str
    events: list[dict]
    redactions: list[Redaction] = field(default_factory=list)
    masked_characters: int = 0


@dataclass
class _Mark:
    rank: tuple[bool, int]  # (found in the final document, entity length)
    entity: str
    offset: int
    length: int


class _Provenance:
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


class _SessionRedactor:
    def __init__(self, session_id: str, events: Sequence[Mapping], detector: Detector) -> None:
        self.session_id = session_id
        self.events = events
        self.detector = detector
        self.doc = _Provenance()
        self.marks: dict[int, _Mark] = {}
        # Each entity as first seen, with the origins of its characters (to drop, from the
        # curator's report, the incomplete sightings of an entity being typed).
        self.found: dict[tuple[str, str], tuple[int, Span, frozenset[int]]] = {}
        self.accepted: list[tuple[int, str, Sequence[Mapping]]] = []  # (event, inserted, list)

    def run(self) -> RedactedSession:
        shown: Sequence[Mapping] = ()
        for index, event in enumerate(self.events):
            name = event.get("eventName")
            if (
                name == "system-initialize"
                and isinstance(event.get("currentDoc"), str)
                and index == 0
            ):
                self.doc.reset(index, event["currentDoc"])
                self._scan(index, [(0, len(self.doc.text))], final=False)
            for key in SUGGESTION_LISTS:
                if event.get(key):
                    shown = event[key]
            delta = event.get("textDelta")
            if isinstance(delta, Mapping) and delta.get("ops"):
                touched = self.doc.apply(index, delta["ops"])
                self._scan(index, touched, final=False)
                text = inserted_text(event)
                if len(text) > 1 and shown and match_suggestion(text, shown) in (EXACT, STRIPPED):
                    self.accepted.append((index, text, shown))
        self._scan(len(self.events) - 1, [(0, len(self.doc.text))], final=True)
        self._mark_accepted_suggestions()
        return self._rewrite()

    def _scan(self, index: int, touched: list[tuple[int, int]], *, final: bool) -> None:
        if not touched:
            return
        text = self.doc.text
        start, end = min(s for s, _ in touched), max(e for _, e in touched)
        # An entity the edit made contains or touches the edit, and no entity is longer than
        # REACH characters (bar a pasted PEM key, which the paste's own range covers); the
        # entities of a line rarely cross a newline.
        low = max(text.rfind("\n", 0, start) + 1, start - REACH)
        high = text.find("\n", end)
        high = min(len(text) if high < 0 else high, end + REACH)
        for span in self.detector.find_in(text, low, high):
            origins = frozenset(self.doc.origin[span.start : span.end])
            self.found.setdefault(
                (span.entity, text[span.start : span.end]), (index, span, origins)
            )
            length = span.end - span.start
            for offset, origin in enumerate(self.doc.origin[span.start : span.end]):
                self._mark(origin, _Mark((final, length), span.entity, offset, length))

    def _mark(self, origin: int, mark: _Mark) -> None:
        current = self.marks.get(origin)
        if current is None or mark.rank > current.rank:
            self.marks[origin] = mark

    def _mark_accepted_suggestions(self) -> None:
        """An inserted suggestion is also scanned alone, as its list item will be."""
        for index, text, _ in self.accepted:
            spans = self.detector.find(text)
            if not spans:
                continue
            origins = self._origins_of_insert(index)
            for span in spans:
                length = span.end - span.start
                ids = frozenset(origins[p] for p in range(span.start, span.end) if p in origins)
                self.found.setdefault(
                    (span.entity, text[span.start : span.end]), (index, span, ids)
                )
                for offset in range(length):
                    origin = origins.get(span.start + offset)
                    if origin is not None:
                        self._mark(origin, _Mark((False, 0), span.entity, offset, length))

    def _origins_of_insert(self, index: int) -> dict[int, int]:
        """position in the event's inserted text -> origin id, over its string inserts in order."""
        out, position = {}, 0
        ops = self.events[index]["textDelta"]["ops"]
        for number, (event, op, value) in enumerate(self.doc.segments):
            if event == index and op >= 0 and isinstance(ops[op]["insert"], str):
                for offset in range(len(value)):
                    out[position + offset] = self.doc.starts[number] + offset
                position += len(value)
        return out

    def _rewrite(self) -> RedactedSession:
        replaced: dict[tuple[int, int], list[str]] = {}
        for origin, mark in sorted(self.marks.items()):
            event, op, offset = self.doc.locate(origin)
            if (event, op) not in replaced:
                replaced[(event, op)] = list(self.doc.inserted(event, op))
            replaced[(event, op)][offset] = mask(mark.entity, mark.length)[mark.offset]
        events = [dict(event) for event in self.events]
        for (index, op), characters in replaced.items():
            if op >= 0 and not isinstance(events[index]["textDelta"]["ops"][op]["insert"], str):
                continue  # an embed next to an entity: it has no text to mask
            if op < 0:
                events[index]["currentDoc"] = "".join(characters)
            else:
                ops = [dict(o) for o in events[index]["textDelta"]["ops"]]
                ops[op]["insert"] = "".join(characters)
                events[index]["textDelta"] = {**events[index]["textDelta"], "ops": ops}
        redactions = [
            Redaction(self.session_id, f"text at event {index}", span.entity, original,
                      mask(span.entity, len(original)), span.score, span.recognizer)
            for (_, original), (index, span, _) in self._complete_sightings()
        ]  # fmt: skip
        redactions += self._redact_suggestions(events)
        redactions += self._redact_later_documents(events)
        redactions += self._redact_attributes(events)
        redactions += self._redact_extension(events)
        return RedactedSession(
            self.session_id, events, redactions, masked_characters=len(self.marks)
        )

    def _complete_sightings(self):
        """Findings whose characters are not all part of a longer finding, in order of sighting."""
        found = sorted(self.found.items(), key=lambda item: (item[1][0], item[1][1].start))
        for key, (index, span, origins) in found:
            if not any(
                len(other) > len(origins) and origins <= other for _, (_, _, other) in found
            ):
                yield key, (index, span, origins)

    def _redact_suggestions(self, events: list[dict]) -> list[Redaction]:
        # The redacted form of each accepted suggestion's text, as it now stands in the log.
        as_inserted: dict[str, str] = {}
        for index, text, shown in self.accepted:
            redacted = inserted_text(events[index])
            if redacted == text:
                continue
            lead, trail = len(text) - len(text.lstrip()), len(text) - len(text.rstrip())
            core = redacted[lead : len(redacted) - trail]
            for item in shown:
                for key in ITEM_TEXTS:
                    value = item.get(key) if isinstance(item, Mapping) else None
                    if isinstance(value, str) and value.strip() == text.strip():
                        head = len(value) - len(value.lstrip())
                        tail = len(value) - len(value.rstrip())
                        as_inserted.setdefault(
                            value, value[:head] + core + value[len(value) - tail :]
                        )
        redactions: list[Redaction] = []
        seen: set[str] = set()
        for index, event in enumerate(events):
            for key in SUGGESTION_LISTS:
                items = event.get(key)
                if not items:
                    continue
                new_items = []
                for number, item in enumerate(items):
                    if not isinstance(item, Mapping):
                        new_items.append(item)
                        continue
                    item = dict(item)
                    for text_key in ITEM_TEXTS:
                        value = item.get(text_key)
                        if not isinstance(value, str):
                            continue
                        redacted, spans = self._redact_item(value, as_inserted)
                        if redacted != value:
                            item[text_key] = redacted
                            if value not in seen:
                                seen.add(value)
                                where = f"events[{index}].{key}[{number}].{text_key}"
                                redactions += self._item_redactions(where, value, redacted, spans)
                    new_items.append(item)
                event[key] = new_items
        return redactions

    def _redact_later_documents(self, events: list[dict]) -> list[Redaction]:
        """A `currentDoc` after the first event (the format has none; validation warns) is not
        replayed, so it is redacted as a text of its own."""
        redactions = []
        for index, event in enumerate(events[1:], start=1):
            value = event.get("currentDoc")
            if isinstance(value, str) and value:
                event["currentDoc"], spans = redact_text(value, self.detector)
                redactions += self._item_redactions(
                    f"events[{index}].currentDoc", value, event["currentDoc"], spans
                )[: len(spans)]
        return redactions

    def _redact_attributes(self, events: list[dict]) -> list[Redaction]:
        """Formatting `attributes` of pasted text hold text of their own that is not part of the
        document (a link's target: `tel:...`, `mailto:...`): each string value is redacted as
        a text of its own, with a same-length mask, so the attributes keep their shape."""
        redactions: list[Redaction] = []
        for index, event in enumerate(events):
            delta = event.get("textDelta")
            if not isinstance(delta, Mapping) or not isinstance(delta.get("ops"), list):
                continue
            ops, changed = list(delta["ops"]), False
            for number, op in enumerate(ops):
                attributes = op.get("attributes") if isinstance(op, Mapping) else None
                if not isinstance(attributes, Mapping):
                    continue
                new_attributes = dict(attributes)
                for name, value in attributes.items():
                    if not isinstance(value, str):
                        continue
                    redacted, spans = redact_text(value, self.detector)
                    if redacted != value:
                        new_attributes[name] = redacted
                        where = f"events[{index}].textDelta.ops[{number}].attributes.{name}"
                        redactions += self._item_redactions(where, value, redacted, spans)
                if new_attributes != attributes:
                    ops[number] = {**op, "attributes": new_attributes}
                    changed = True
            if changed:
                event["textDelta"] = {**delta, "ops": ops}
        return redactions

    def _redact_extension(self, events: list[dict]) -> list[Redaction]:
        """A proactive event's extension holds text of its own (a span's text, a rationale, an
        assistant panel's request and reply): each string value is redacted as a text."""
        redactions: list[Redaction] = []
        for index, event in enumerate(events):
            extension = event.get(EXTENSION)
            if not isinstance(extension, Mapping):
                continue
            new_extension = dict(extension)
            for name, value in extension.items():
                if not isinstance(value, str):
                    continue
                redacted, spans = redact_text(value, self.detector)
                if redacted != value:
                    new_extension[name] = redacted
                    where = f"events[{index}].{EXTENSION}.{name}"
                    redactions += self._item_redactions(where, value, redacted, spans)
            if new_extension != extension:
                event[EXTENSION] = new_extension
        return redactions

    def _redact_item(self, value: str, as_inserted: Mapping[str, str]) -> tuple[str, list[Span]]:
        if value in as_inserted:
            return as_inserted[value], list(self.detector.find(value))
        return redact_text(value, self.detector)

    def _item_redactions(
        self, where: str, value: str, redacted: str, spans: list[Span]
    ) -> list[Redaction]:
        if not spans:  # masked only because the inserted copy was masked in context
            return [
                Redaction(self.session_id, where, "IN_CONTEXT", value, redacted, 0.0, "document")
            ]
        return [
            Redaction(self.session_id, where, s.entity, value[s.start : s.end],
                      redacted[s.start : s.end], s.score, s.recognizer)
            for s in spans
        ]  # fmt: skip


def redact_session(
    session_id: str, events: Sequence[Mapping], detector: Detector
) -> RedactedSession:
    """The session with every entity masked in place (see the module docstring)."""
    return _SessionRedactor(session_id, events, detector).run()
