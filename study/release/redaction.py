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

The texts of the log beside the document (suggestion lists, a later `currentDoc`, pasted
text's formatting `attributes`, a proactive session's extension) are redacted as texts of their
own (study.release.redaction_texts); an inserted suggestion is also scanned here on its own, as
its list item will be, so that the two are masked alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from study.curation.suggestions import EXACT, STRIPPED, inserted_text, match_suggestion
from study.release.pii import Detector, Span, mask
from study.release.redaction_origins import DocumentOrigins
from study.release.redaction_report import Redaction
from study.release.redaction_texts import SUGGESTION_LISTS, redact_texts

REACH = 400  # characters scanned each side of an edit


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


class _SessionRedactor:
    def __init__(self, session_id: str, events: Sequence[Mapping], detector: Detector) -> None:
        self.session_id = session_id
        self.events = events
        self.detector = detector
        self.doc = DocumentOrigins()
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
        redactions += redact_texts(self.session_id, events, self.accepted, self.detector)
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


def redact_session(
    session_id: str, events: Sequence[Mapping], detector: Detector
) -> RedactedSession:
    """The session with every entity masked in place (see the module docstring)."""
    return _SessionRedactor(session_id, events, detector).run()
