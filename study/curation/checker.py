"""The invariants of a session log's format, checked one schema-valid record at a time
(`Checker`, in the order the checks run); study.curation.validate feeds it and reports.

Every finding is an issue code of study.curation.issues, with the line and field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from study import paradigms
from study.curation.formats import CONTROL_KEYS, FORMAT_2021, FORMAT_INTERFACE, RELEASE_KEYS
from study.curation.issues import SessionReport
from study.curation.quote import quote
from study.curation.replay import WRITER, DeltaError, apply_delta, keystroke, to_units
from study.curation.suggestions import LOOSE, inserted_text, match_suggestion, shown_texts


class Replayed(Protocol):
    """What `Checker` reads of a replay running ahead of it (study.curation.origin.Attribution):
    the record whose keystroke (study.curation.replay.keystroke: one insert or delete after a
    retain) it applied last, the text before it (the same object as the checker's when the two
    are in step) and the text after it."""

    keystroke: Mapping | None
    before: str
    text: str


TEXT_EVENTS = frozenset({"text-insert", "text-delete"})
SUGGESTION_EVENTS = frozenset({"suggestion-get", "suggestion-open", "suggestion-select"})
# Table 1 of the paper; suggestion-hover (logged, not in Table 1) is the writer's, and
# suggestion-fail (later interface) is left open.
SOURCES = {
    "system-initialize": {"api"},
    "text-insert": {"user", "api"},
    "text-delete": {"user"},
    "cursor-forward": {"user", "api"},
    "cursor-backward": {"user"},
    "cursor-select": {"user"},
    "suggestion-get": {"user"},
    "suggestion-open": {"api"},
    "suggestion-reopen": {"user"},
    "suggestion-up": {"user"},
    "suggestion-down": {"user"},
    "suggestion-hover": {"user"},
    "suggestion-select": {"user"},
    "suggestion-close": {"user", "api"},
    "suggestion-fail": {"user", "api"},
}


class Checker:
    """The format's invariants, fed one record at a time (memory: one session's text)."""

    def __init__(self, report: SessionReport, replayed: Replayed | None = None) -> None:
        self.report = report
        # A replay the caller feeds each record before this checker sees it (`study curate
        # stats --validate` replays for its statistics): its text is taken where it applied
        # the same keystroke to the same text, instead of applying it twice.
        self.replayed = replayed
        self.format: str | None = None
        self.numbered = False  # eventNum must equal the line order (2021 format)
        self.index = 0
        self.text: str | None = None  # None once the replayed text cannot be trusted
        self.previous_timestamp = -1
        self.controls: tuple | None = None
        self.pending_get: int | None = None  # line of a suggestion-get not answered yet
        self.awaiting_select: int | None = None  # line of a select whose insert is due
        self.shown: list | None = None  # the last shown suggestion list, and its line
        self.shown_line: int | None = None
        self.taken = ""  # what partial accepts inserted of the shown suggestion so far
        self.line = 0  # the line being checked (for `_embed`, called from inside replay)
        self.sources = SOURCES
        # A paradigm's extended format (e.g. MindCopilot's, coauthor-proactive): its own checks,
        # fed every record after the core's (study.paradigms.base: `coauthor_log`).
        self.extension = None
        self.extension_key = ""

    def set_format(self, format_name: str) -> None:
        self.report.format = self.format = format_name
        log = paradigms.log_format(format_name)
        self.numbered = format_name == FORMAT_2021 or log is not None
        if log is not None:
            self.sources = {**SOURCES, **log.SOURCES}
            self.extension = log.checks(self)
            self.extension_key = log.KEY

    def add(
        self, code: str, line: int | None, field_name: str | None, message: str, fix: str = ""
    ) -> None:
        self.report.add(code, line, field_name, message, fix)

    def broken(self, line: int, record: object) -> None:
        """A record that failed to parse or broke the schema: only its position is known."""
        if not isinstance(record, Mapping) or record.get("textDelta") != "":
            self.text = None
        self.index += 1

    def record(self, line: int, r: Mapping) -> None:
        """One schema-valid record: the common case runs straight through, and each rare
        finding has its own method."""
        index = self.index
        self.index = index + 1
        name, source = r["eventName"], r["eventSource"]
        if source not in self.sources[name]:
            listed = " or ".join(sorted(self.sources[name]))
            self.add(
                "event-source",
                line,
                "eventSource",
                f"{name} from {quote(source)}: Table 1 has {listed}",
            )
        timestamp = r["eventTimestamp"]
        if timestamp < self.previous_timestamp:
            back = self.previous_timestamp - timestamp
            self.add(
                "timestamp-order",
                line,
                "eventTimestamp",
                f"goes back {back} ms from the line before",
            )
        self.previous_timestamp = timestamp
        if self.numbered and r["eventNum"] != index:
            self.add(
                "event-num",
                line,
                "eventNum",
                f"is {r['eventNum']}, expected {index} (the line order)",
            )
        if index == 0:
            self._first(line, r)
        elif name == "system-initialize" or r["currentDoc"]:
            self._late_initialize(line, name, r)
        delta = r["textDelta"]
        if delta:
            if name not in TEXT_EVENTS:
                self.add(
                    "delta-on-non-text-event",
                    line,
                    "textDelta",
                    f"{name} carries a delta; only text-insert and text-delete change the text",
                )
            replayed = self.replayed
            if replayed is not None and replayed.keystroke is r and replayed.before is self.text:
                self.text = replayed.text
            elif self.text is not None and (edit := keystroke(self.text, delta["ops"])) is not None:
                self.text = edit[0]  # what apply_delta gives, without its call (nothing to report)
            elif self.text is not None:
                self.line = line
                try:
                    self.text = apply_delta(self.text, delta["ops"], None, WRITER, self._embed)
                except DeltaError as error:
                    self.add("delta", line, f"textDelta.{error.field}", error.detail)
                    self.text = None
        elif name in TEXT_EVENTS:
            self.add("text-without-delta", line, "textDelta", f'is "" on a {name} event')
        if self.text is not None:
            length = len(self.text)
            span = r["cursorRange"]
            if r["currentCursor"] > length or (span and span["index"] + span["length"] > length):
                self._cursor(line, r, length)
        controls = (
            r["currentN"],
            r["currentMaxToken"],
            r["currentTemperature"],
            r["currentTopP"],
            r["currentPresencePenalty"],
            r["currentFrequencyPenalty"],
        )
        if controls != self.controls:
            self._controls(line, controls)
        if name in SUGGESTION_EVENTS or (
            name == "text-insert" and (source == "api" or self.awaiting_select)
        ):
            self._suggestion(line, name, source, r)
        if self.extension is not None:
            self.extension.record(line, r)

    def _first(self, line: int, r: Mapping) -> None:
        keys = RELEASE_KEYS + ((self.extension_key,) if self.extension is not None else ())
        if self.numbered and tuple(r) != keys:  # one writer wrote the file: check once
            self.add("key-order", line, None, "keys are not in the 2021 release's order")
        if r["eventName"] != "system-initialize":
            self.add(
                "first-event",
                line,
                "eventName",
                f"the first event is {r['eventName']}, not system-initialize with the prompt",
            )
            return
        prompt = r["currentDoc"]
        if not prompt:
            self.add("prompt", line, "currentDoc", "is empty: the session has no prompt")
        elif not prompt.endswith("\n"):
            self.add(
                "prompt",
                line,
                "currentDoc",
                "does not end in a newline as Quill documents do",
                'append "\\n" to the prompt',
            )
        self.text = to_units(prompt)  # positions are UTF-16 code units, as in Quill

    def _late_initialize(self, line: int, name: str, r: Mapping) -> None:
        if name == "system-initialize":
            self.add(
                "second-initialize",
                line,
                "eventName",
                "system-initialize after the first line: a session starts only once",
            )
        if r["currentDoc"]:
            self.add("later-current-doc", line, "currentDoc", "is filled after the first event")

    def _embed(self, number: int, embed: Mapping) -> None:
        kind = next(iter(embed))
        self.add(
            "embed",
            self.line,
            f"textDelta.ops[{number}].insert",
            f"is a Quill embed ({quote(kind)}), one character: {quote(embed)}",
        )

    def _cursor(self, line: int, r: Mapping, length: int) -> None:
        if r["currentCursor"] > length:
            self.add(
                "cursor-mismatch",
                line,
                "currentCursor",
                f"{r['currentCursor']} is past the end of the text (length {length})",
            )
        span = r["cursorRange"]
        if span and span["index"] + span["length"] > length:
            self.add(
                "cursor-mismatch",
                line,
                "cursorRange",
                f"{span['index']}+{span['length']} runs past the end of the text (length {length})",
            )

    def _controls(self, line: int, controls: tuple) -> None:
        if self.controls is None or not any(self.controls):
            self.controls = controls
        elif any(controls):  # the later interface leaves them empty on its first event
            changed = [
                (key, before, after)
                for key, before, after in zip(CONTROL_KEYS, self.controls, controls, strict=True)
                if before != after
            ]
            (key, before, after), others = changed[0], changed[1:]
            also = "".join(f", {k} {quote(b)} -> {quote(a)}" for k, b, a in others)
            self.add(
                "controls-changed",
                line,
                key,
                f"changed from {quote(before)} to {quote(after)}{also}: a new generation setting",
            )
            self.controls = controls

    def _suggestion(self, line: int, name: str, source: str, r: Mapping) -> None:
        if name == "suggestion-get":
            self._not_inserted()
            self._unanswered()
            self.pending_get = line
        elif name == "suggestion-open":
            self.pending_get = None
            self.shown, self.shown_line = r["currentSuggestions"], line
            self.taken = ""
            if not self.shown:
                self.add(
                    "empty-suggestions", line, "currentSuggestions", "suggestion-open shows none"
                )
        elif name == "suggestion-select":
            self._not_inserted()
            if not self.shown:
                self.add(
                    "selection-without-list",
                    line,
                    "eventName",
                    "suggestion-select before any suggestions were shown",
                )
            else:
                self.awaiting_select = line
        else:
            self._inserted(line, source, r)

    def _inserted(self, line: int, source: str, r: Mapping) -> None:
        """A text-insert from the api, or the first one after a selection: it must be one of
        the shown suggestions, matched by text (index fields are unreliable)."""
        selected, self.awaiting_select = self.awaiting_select, None
        if self.extension is not None and self.extension.partial_insert(line, r):
            return
        if not self.shown:
            self.add(
                "selection-without-list",
                line,
                "eventSource",
                "an api text-insert (an accepted suggestion) before any suggestions were shown",
            )
            return
        found = match_suggestion(inserted_text(r), self.shown)
        if found is None and source == "user" and self.format != FORMAT_INTERFACE:
            self.awaiting_select = selected  # the writer typed first; the api insert may follow
            return
        if found is None and self._partly(inserted_text(r)):
            self.add(
                "suggestion-partial",
                line,
                "textDelta",
                f"inserts the next words of a suggestion shown at line {self.shown_line}, not "
                "all of it (a partial accept)",
            )
            return
        if found is None:
            count = len(self.shown)
            self.add(
                "suggestion-mismatch",
                line,
                "textDelta",
                f"inserts an accepted suggestion that matches none of the {count} shown at "
                f"line {self.shown_line} (matched by text)",
            )
        elif found == LOOSE:
            self.add(
                "suggestion-loose-match",
                line,
                "textDelta",
                f"matches a suggestion shown at line {self.shown_line} only up to whitespace",
            )

    def _partly(self, piece: str) -> bool:
        # MindCopilot's partial accept (Ctrl+Right) inserts a suggestion a word at a time; the
        # strict CoAuthor export keeps those inserts, each the next part of what was shown.
        taken = self.taken + piece
        if piece and any(text.startswith(taken) for text in shown_texts(self.shown)):
            self.taken = taken
            return True
        return False

    def _not_inserted(self) -> None:
        if self.awaiting_select is not None:
            self.add(
                "selection-not-inserted",
                self.awaiting_select,
                "eventName",
                "suggestion-select is not followed by a text-insert of the chosen suggestion",
            )
            self.awaiting_select = None

    def _unanswered(self) -> None:
        if self.pending_get is not None:
            self.add(
                "unanswered-query",
                self.pending_get,
                "eventName",
                "suggestion-get is not answered by a suggestion-open",
            )

    def finish(self) -> None:
        self._not_inserted()
        self._unanswered()
        if self.extension is not None:
            self.extension.finish()
