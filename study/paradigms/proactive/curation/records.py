"""One record per proactive suggestion (spec A2.6), derived from an extended session log.

Fields: session, paradigm, suggestion id, stage and idle threshold (L3), when it was asked and
shown, the suggestion, the outcome, what was accepted, its final text, the modifications, the
editing durations, the context before it, and the writer's own continuation (the live
`<REFERENCE>` for HAR, spec A3.1): what the writer typed from the suggestion's anchor until the
next suggestion was asked for, after the part of it they accepted, if any. So an accepted
suggestion is judged against what the writer went on to write themselves, as a rejected one is
against what they wrote instead; the paper's simulation (§5.2) judges against the article's
held-out continuation, which never contains the suggestion either. Outcomes (spec A2.5): accepted, accepted_modified, partial
(some words taken), rejected, ignored (still on screen at the end), stale (never shown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from study.paradigms.proactive.curation.spans import map_span, track_accepted, edits
from study.curation.replay import apply_delta, from_units, to_units


@dataclass
class SuggestionRecord:
    session_id: str
    paradigm: str
    suggestion_id: int | None
    stage: str | None
    idle_ms: int | None
    asked_at: int
    shown_at: int | None
    suggestion: str
    outcome: str
    close_reason: str | None
    accepted_text: str
    final_text: str
    modifications: int
    edit_seconds: float | None  # (a) last touching edit - acceptance
    edit_gap_seconds: float | None  # (b) sum of gaps between consecutive touching edits
    context: str
    reference: str
    progress: float  # anchor / final document length (Fig. 4's x axis)
    # s_t+1 (MindCopilot Eq. 2): the document when the next suggestion is asked for, or at the
    # end of the session: the state the writer's response left for the next step.
    next_state: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def session_paradigm(events: Sequence[Mapping]) -> str:
    """The paradigm the session's records name ("" when none does)."""
    return next(((e.get("proactive") or {}).get("paradigm") for e in events if e.get("proactive")), "") or ""


def suggestion_records(
    events: Sequence[Mapping], session_id: str = "", window_ms: int = 60000
) -> list[SuggestionRecord]:
    """`window_ms`: an accepted suggestion's final text is what it holds this long after
    acceptance (the editor's `modify_window_ms`; 0: at the end of the session). An L0 session
    (Tab lists, as CoAuthor) has no ghost-text suggestions: none."""
    if session_paradigm(events) == "L0":
        return []
    text = to_units(events[0]["currentDoc"])
    records: dict[object, SuggestionRecord] = {}
    order: list[SuggestionRecord] = []
    pending: dict | None = None  # the last suggestion-get's extension and time
    # The writer's continuation from each suggestion's anchor: a span that grows as they type.
    continuation: dict[object, list[int]] = {}
    for event in events[1:]:
        name, ext = event["eventName"], event.get("proactive") or {}
        sid = ext.get("suggestionId")
        if name == "suggestion-get":
            pending = {**ext, "at": event["eventTimestamp"]}
            for record in order:
                if record.next_state is None:
                    record.next_state = from_units(text[:-1] if text.endswith("\n") else text)
            for key, span in continuation.items():
                if len(span) == 2:
                    records[key].reference = from_units(text[span[0] : span[1]])
                    span.append(-1)  # closed
        elif name in ("suggestion-open", "suggestion-stale"):
            shown = event["currentSuggestions"]
            record = SuggestionRecord(
                session_id=session_id, paradigm=ext.get("paradigm", ""), suggestion_id=sid,
                stage=(pending or {}).get("stage"), idle_ms=(pending or {}).get("idleMs"),
                asked_at=(pending or {}).get("at", event["eventTimestamp"]),
                shown_at=event["eventTimestamp"] if shown else None,
                suggestion=shown[0]["original"] if shown else "",
                outcome="ignored" if shown else "stale", close_reason=None,
                accepted_text="", final_text="", modifications=0, edit_seconds=None,
                edit_gap_seconds=None, context=from_units(text[:-1] if text.endswith("\n") else text),
                reference="", progress=0.0,
            )
            records[sid] = record
            order.append(record)
            anchor = len(text) - 1
            if shown:
                continuation[sid] = [anchor, anchor]
        elif name == "suggestion-close" and sid in records:
            record = records[sid]
            record.close_reason = ext.get("closeReason")
            if record.close_reason == "accept":
                record.outcome = "accepted"
            elif record.outcome == "ignored":
                record.outcome = "rejected"
        elif name == "suggestion-select" and sid in records and ext.get("partial"):
            records[sid].outcome = "partial"
        elif name == "suggestion-modify" and sid in records:
            records[sid].modifications += 1
        delta = event.get("textDelta")
        if delta:
            accepting = continuation.get(sid) if event.get("eventSource") == "api" else None
            for position, inserted, deleted in edits(delta["ops"]):
                for span in continuation.values():
                    if len(span) != 2:
                        continue
                    if span is accepting and inserted:
                        # The live reference starts after what the writer accepted (issue 21,
                        # item 6): a reference that began with the suggestion would pass it
                        # trivially (HAR rule 12, early overlap).
                        span[0] = span[1] = position + inserted
                    elif inserted and span[0] <= position <= span[1]:
                        span[1] += inserted  # typed at or inside the continuation: it grows
                    else:
                        span[0], span[1], _ = map_span(span[0], span[1], position, inserted, deleted)
            text = apply_delta(text, delta["ops"])
    for key, span in continuation.items():
        if len(span) == 2:
            records[key].reference = from_units(text[span[0] : span[1]])
    final_length = max(1, len(text) - 1)
    for record in order:
        if record.next_state is None:
            record.next_state = from_units(text[:-1] if text.endswith("\n") else text)
    for record in order:
        record.progress = round(len(to_units(record.context)) / final_length, 4)
    for span in track_accepted(events, window_ms or 10**15):
        record = records.get(span.key)
        if record is None:
            continue
        record.accepted_text, record.final_text = span.text, span.final or ""
        if span.touches:
            record.edit_seconds = (span.touches[-1] - span.accepted_at) / 1000
            record.edit_gap_seconds = sum(b - a for a, b in zip(span.touches, span.touches[1:])) / 1000
        if record.outcome == "partial" and record.accepted_text == record.suggestion:
            record.outcome = "accepted"
        if record.outcome in ("accepted", "partial") and record.modifications:
            record.outcome = "accepted_modified"
    return order
