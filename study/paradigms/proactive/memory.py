"""The editor's interaction memory rebuilt from a session's stored events.

editor-proactive-memory.js keeps three lists that L2 and L3 requests carry (README, Proactive
co-writing): `history` (the accepted, rejected, deleted and added spans of
study.paradigms.proactive.context), `outcomes` (one per suggestion shown or stale, oldest first:
L3's rejection run) and `accepted` (the spans of accepted suggestions: L3's kept-words window
and the modify tracking). A browser that reloads without its saved copy (study/static/
editor-outbox.js) would start them empty; the state endpoint (study.server.events_api) serves
this rebuild instead, so the next request carries what it would have carried.

`interaction_memory` replays the extended log with the editor's own rules, in the editor's
positions (UTF-16 code units of the text without Quill's final newline):
- an accepted piece (text-insert from the api naming a suggestionId) opens or grows that
  suggestion's <accept> span and accepted span; it moves no other span (the editor does not);
- a suggestion-close that is no accept rejects: <reject> with the whole suggestion at the
  caret where it was shown, unless some of it was taken (then it counts as accepted);
- a writer's text event with a suggestion on screen rejects it first (a paste, no key first);
- each edit of a writer's text event maps every span and anchor (editor-ghost.js mapSpan,
  mapPoint), then adds <del> / <add>, growing the last item when the writer goes on deleting
  backwards or typing on;
- suggestion-modify marks its suggestion's outcome accepted_modified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from study.paradigms.proactive.curation.spans import edits, map_span
from study.curation.replay import apply_delta, from_units, to_units


def map_point(point: int, position: int, inserted: int, deleted: int) -> int:
    """An anchored position after one edit (editor-ghost.js `mapPoint`)."""
    if inserted and position < point:
        return point + inserted
    if deleted and position < point:
        return max(position, point - deleted)
    return point


class _Memory:
    def __init__(self) -> None:
        self.history: list[dict] = []
        self.outcomes: list[str] = []
        self.accepted: list[dict] = []
        self.current: dict | None = None  # the suggestion on screen
        self.shown: dict[object, int] = {}  # suggestionId -> its place in outcomes

    def open(self, sid: object, text: str, anchor: int) -> None:
        self.current = {"id": sid, "text": text, "anchor": anchor, "taken": False,
                        "outcome": len(self.outcomes)}
        self.shown[sid] = len(self.outcomes)
        self.outcomes.append("shown")

    def close(self, accepted: bool) -> None:
        current, self.current = self.current, None
        if accepted or current["taken"]:
            self.outcomes[current["outcome"]] = "accepted"
        else:
            self.outcomes[current["outcome"]] = "rejected"
            self.history.append({"kind": "reject", "index": current["anchor"], "text": current["text"]})

    def take(self, sid: object, start: int, length: int, at: int) -> None:
        outcome = self.shown.get(sid, len(self.outcomes) - 1)
        if self.current and self.current["id"] == sid:
            self.current["taken"] = True
        span = next((s for s in self.accepted if s["id"] == sid and s["end"] == start), None)
        if span:
            span["end"] += length
        else:
            self.accepted.append({"id": sid, "start": start, "end": start + length, "at": at, "outcome": outcome})
        item = next((h for h in self.history if h["kind"] == "accept" and h.get("id") == sid), None)
        if item:
            item["length"] += length
        else:
            self.history.append({"kind": "accept", "index": start, "length": length, "id": sid})

    def edit(self, position: int, grown: int, deleted: int, gone: str) -> None:
        for span in self.accepted:
            span["start"], span["end"], _ = map_span(span["start"], span["end"], position, grown, deleted)
        self.accepted = [s for s in self.accepted if s["end"] > s["start"]]
        for item in self.history:
            if "text" in item:
                item["index"] = map_point(item["index"], position, grown, deleted)
            else:
                start, end, _ = map_span(item["index"], item["index"] + item["length"], position, grown, deleted)
                item["index"], item["length"] = start, end - start
        self.history = [h for h in self.history if "text" in h or h["length"] > 0]
        last = self.history[-1] if self.history else None
        if deleted:
            if last and last["kind"] == "del" and last["index"] == position:
                last["text"] = gone + last["text"]
            else:
                self.history.append({"kind": "del", "index": position, "text": gone})
        if grown:
            if last and last["kind"] == "add" and last["index"] + last["length"] == position:
                last["length"] += grown
            else:
                self.history.append({"kind": "add", "index": position, "length": grown})


def interaction_memory(events: Sequence[Mapping]) -> dict:
    """{"history", "outcomes", "accepted"} as editor-proactive-memory.js holds them after `events`
    (stored records in order, the first a system-initialize). Pure: reads nothing else."""
    memory = _Memory()
    if not events:
        return {"history": [], "outcomes": [], "accepted": []}
    text = to_units(events[0].get("currentDoc") or "\n")
    for event in events[1:]:
        name, ext = event["eventName"], event.get("proactive") or {}
        sid = ext.get("suggestionId")
        if name == "suggestion-stale":
            memory.outcomes.append("stale")
        elif name == "suggestion-open" and event.get("currentSuggestions"):
            memory.open(sid, event["currentSuggestions"][0]["original"], len(text) - 1)
        elif name == "suggestion-close" and memory.current and memory.current["id"] == sid:
            memory.close(ext.get("closeReason") == "accept")
        elif name == "suggestion-modify":
            span = next((s for s in memory.accepted if s["id"] == sid), None)
            if span is not None:
                memory.outcomes[span["outcome"]] = "accepted_modified"
        delta = event.get("textDelta")
        if not delta:
            continue
        ops = delta["ops"]
        if event["eventSource"] == "api" and name == "text-insert" and sid is not None:
            for position, length, _ in edits(ops):
                if length:
                    memory.take(sid, position, length, event["eventTimestamp"])
        elif event["eventSource"] == "user":
            if memory.current is not None:
                memory.close(False)  # the editor rejects what is on screen before the edit
            running, position = text, 0
            for op in ops:  # left to right, positions in the text as each op finds it
                if "retain" in op:
                    position += op["retain"]
                elif isinstance(op.get("insert"), str):
                    units = to_units(op["insert"])
                    memory.edit(position, len(units), 0, "")
                    running = running[:position] + units + running[position:]
                    position += len(units)
                elif "delete" in op:
                    gone = running[position : position + op["delete"]]
                    memory.edit(position, 0, op["delete"], from_units(gone))
                    running = running[:position] + running[position + op["delete"] :]
        text = apply_delta(text, ops)
    return {"history": memory.history, "outcomes": memory.outcomes, "accepted": memory.accepted}

