"""The invariants of a proactive session log (schemas/coauthor-proactive.schema.json).

On top of the CoAuthor checks (study.curation.validate), a proactive log must satisfy:
- every event about a suggestion names a `suggestionId` that a suggestion-open showed;
- an accepted text-insert (api) inserts the next piece of its suggestion: the whole text, or,
  with partial accept, the next words, in order; so the ghost text is never in the document
  except as accepted (replay stays exact);
- a suggestion-modify describes the replayed text: its span holds its `text`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from study.curation.replay import to_units
from study.curation.suggestions import inserted_text

PROACTIVE_SOURCES = {
    "suggestion-get": {"user", "api"},  # api: the idle trigger asked, not the writer
    "suggestion-stale": {"api"},
    "suggestion-modify": {"api"},
    "window-blur": {"user"},
    "window-focus": {"user"},
    "stage-change": {"api"},
    "chat-send": {"user"},
    "chat-receive": {"api"},
    "chat-copy": {"user"},
    "panel-focus": {"user"},
}


class ProactiveChecks:
    """Fed by the validator's Checker (study.curation.checker: its `add` and replayed `text`) one
    record at a time."""

    def __init__(self, checker) -> None:
        # The checker holds these checks: a proxy, not a reference, so the two are no cycle
        # that a worker running without the collector (study.curation.runner) keeps forever.
        self.checker = weakref.proxy(checker)
        self.rest: dict[int, str] = {}  # suggestionId -> what is not accepted yet
        self.accepted: set[int] = set()

    def _known(self, line: int, r: Mapping) -> int | None:
        sid = r["proactive"].get("suggestionId")
        if sid is None:
            return None
        if sid not in self.rest:
            self.checker.add(
                "proactive-unknown-suggestion",
                line,
                "proactive.suggestionId",
                f"{r['eventName']} names suggestion {sid}, which no suggestion-open showed",
            )
            return None
        return sid

    def record(self, line: int, r: Mapping) -> None:
        name = r["eventName"]
        if name == "suggestion-open":
            sid = r["proactive"].get("suggestionId")
            shown = r["currentSuggestions"]
            if sid is not None and shown:
                self.rest[sid] = shown[0]["original"]
        elif name == "suggestion-stale":
            self.checker.pending_get = None  # answered, too late to show
            self._known_or_unshown(r)
        elif name in ("suggestion-select", "suggestion-close"):
            self._known(line, r)
        elif name == "suggestion-modify":
            sid = self._known(line, r)
            if sid is not None and sid not in self.accepted:
                self.checker.add(
                    "proactive-unknown-suggestion", line, "proactive.suggestionId",
                    f"suggestion-modify names suggestion {sid}, which was never accepted",
                )
            self._span(line, r)

    def _known_or_unshown(self, r: Mapping) -> None:
        # A stale answer was never shown: its id is new here, and that is fine.
        sid = r["proactive"].get("suggestionId")
        if sid is not None:
            self.rest.setdefault(sid, "")

    def partial_insert(self, line: int, r: Mapping) -> bool:
        """Check an accepted text-insert against its suggestion; True when it was one."""
        if r["eventSource"] != "api" or r["eventName"] != "text-insert":
            return False
        sid = self._known(line, r)
        if sid is None:
            return r["proactive"].get("suggestionId") is not None
        piece, rest = inserted_text(r), self.rest[sid]
        if piece and rest.startswith(piece):
            self.rest[sid] = rest[len(piece) :]
            self.accepted.add(sid)
        else:
            self.checker.add(
                "suggestion-mismatch", line, "textDelta",
                f"inserts {piece[:40]!r}, which is not the next part of suggestion {sid} "
                f"({rest[:40]!r} is left of it)",
            )
        return True

    def _span(self, line: int, r: Mapping) -> None:
        span, text = r["proactive"].get("span"), r["proactive"].get("text")
        document = self.checker.text
        if not span or text is None or document is None:
            return
        found = document[span["index"] : span["index"] + span["length"]]
        if found != to_units(text):
            self.checker.add(
                "proactive-span", line, "proactive.span",
                f"the replayed text there is {found[:40]!r}, not {text[:40]!r}",
            )

    def finish(self) -> None:
        pass
