"""The official per-session metadata of the CoAuthor release (its `metadata.csv` columns).

Each definition below was checked against the released values of all 1,445 sessions (shared
data README, "Metadata columns") and is tested against the 31 fixture sessions. The function
is pure: parsed events in, numbers out. `study/export/coauthor.py` calls it to write the
release's `metadata.csv`, so its signature and keys are stable.

Readings chosen where the README leaves room:
- `time` uses the first and last *lines*, not min/max timestamp: timestamps are not always
  monotonic and "(last - first eventTimestamp)" names positions in the log.
- Rounding is Python's `round` (half to even), as the release was produced in Python.
- `perc_selected` is 0 for a session without queries (fixture 7748d213...: 0 queries, 0).
- `written_by_human` counts the inserted characters of every event's delta by its
  `eventSource` (user / api), whatever the event's name, and all of each insert: typed or
  pasted, with or without formatting `attributes`, later deleted or not. Characters are Python
  code points (an emoji is 1, where Quill's positions count 2). A Quill embed (a pasted image)
  is 1, its length in Quill. A session where nobody inserted anything gets 0, mirroring
  `perc_selected`. In the later interface, which logs the chosen suggestion as a `user`
  text-insert right after suggestion-select, that insert (matched by text against the list
  shown, as `study.curation.replay` matches it) is the model's, as an api insert is in 2021
  (the 2021 logs have no such insert, so their values do not change).

`written_by_human` and the release, measured: run on the whole public release (1,445
sessions, issue 11), this definition gave the released value for every session compared but
one, which differs by 2 points.
Which definition the release used there cannot be settled from the logs available here. What
the 31 fixture sessions settle (each alternative gives a different released value for at
least one of them, so the release did not use it): excluding inserts that carry formatting
attributes (11142ca3: 22, released 29) or pastes of more than one character (1c5622c2: 10,
released 16); counting inserts net of what the same event deleted (f4d98feb: 67, released 68);
not counting newlines (b5f8899b: 48, released 49); counting an accepted suggestion as the list
item at `currentSuggestionIndex` (8 sessions differ); truncating or rounding up instead of
rounding (13 and 17 sessions differ); counting events instead of characters. What they cannot
settle, because none of the 31 has the case: characters outside the Basic Multilingual Plane
(UTF-16 units, as JavaScript's `length`, would count an emoji twice: a session whose inserted
text is about 3-7% emoji moves by 2 points); inserts carried by a `text-delete` event
(a longer selection pasted over: counting by event name would leave them out); an api insert
that follows no suggestion-select; round half up rather than to even (at most 1 point); and
embeds (0 or 1 character: 1 point only in a session with under ~100 inserted characters).
The first two are the likely causes of a single 2-point difference; the toolkit keeps the
definition that reproduces every other session, and reports its own value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from study.curation.replay import is_embed
from study.curation.suggestions import inserted_text, match_suggestion

CURSOR_EVENTS = frozenset({"cursor-forward", "cursor-backward", "cursor-select"})


def inserted_characters(event: Mapping) -> int:
    """Characters an event's `textDelta` inserts (0 for `""` or a delta without inserts); a
    Quill embed (a pasted image) is one, as in Quill and `study.curation.replay`."""
    return _inserted(event.get("textDelta"))


def _inserted(delta: object) -> int:
    if not delta or not (type(delta) is dict or isinstance(delta, Mapping)):
        return 0
    total = 0
    for op in delta.get("ops") or ():
        text = op.get("insert") if type(op) is dict or isinstance(op, Mapping) else None
        if type(text) is str:
            total += len(text)
        elif text is not None and is_embed(text):
            total += 1
    return total


def official_metadata(events: Sequence[Mapping]) -> dict:
    """The release's metadata for one session, from its events in line order.

    - `num_event`: number of lines (events).
    - `num_query`: number of `suggestion-open` events (not `suggestion-get`: not every request
      is answered).
    - `num_selected`: number of `suggestion-select` events.
    - `perc_selected`: round(100 * num_selected / num_query), 0 without queries.
    - `num_cursor`: cursor-forward + cursor-backward + cursor-select events, any source.
    - `time`: (last - first eventTimestamp) / 60000, minutes rounded to 2 decimals.
    - `written_by_human`: round(100 * characters inserted by the user / characters inserted by
      user and api), as read in the module docstring (which also says where it may differ
      from the release). Not the paper's Table 3 "written by writers" (that is the share of
      the final text; see `study.curation.metrics.writer_share_final`).
    - `first_timestamp`, `last_timestamp`: eventTimestamp of the first and last line, epoch ms.
    """
    tally = MetadataTally()  # with no events, its result says so
    for event in events:
        tally.add(event)
    return tally.result()


class MetadataTally:
    """`official_metadata` fed one event at a time, in line order (`study curate stats
    --validate` measures a session while it checks it, study.curation.onepass)."""

    def __init__(self) -> None:
        self.names: list[object] = []  # eventName of every event, counted at the end
        self.by_user = self.by_api = 0
        self.first: Mapping | None = None
        self.last: Mapping | None = None
        # The later interface logs a chosen suggestion as a `user` text-insert right after
        # suggestion-select: the model's text (study.curation.replay reads it so too).
        self.shown: Sequence[Mapping] = ()
        self.awaiting_choice = False

    def add(self, event: Mapping) -> None:
        if self.first is None:
            self.first = event
        self.last = event
        name = event.get("eventName")
        self.names.append(name)
        if name == "suggestion-open":
            self.shown = event.get("currentSuggestions") or self.shown
        elif name == "suggestion-select":
            self.awaiting_choice = True
        delta = event.get("textDelta")
        if delta:
            awaiting_choice, self.awaiting_choice = self.awaiting_choice, False
            chosen = (
                awaiting_choice and name == "text-insert"
                and match_suggestion(inserted_text(event), self.shown) is not None
            )  # fmt: skip
            if event.get("eventSource") == "user" and not chosen:
                self.by_user += _inserted(delta)
            else:
                self.by_api += _inserted(delta)

    def result(self) -> dict:
        """The metadata of the events added (official_metadata's keys)."""
        if self.first is None or self.last is None:
            raise ValueError("a session needs at least one event (system-initialize)")
        first = int(self.first["eventTimestamp"])
        last = int(self.last["eventTimestamp"])
        names = self.names
        num_query, num_selected = names.count("suggestion-open"), names.count("suggestion-select")
        written = self.by_user + self.by_api
        return {
            "num_event": len(names),
            "num_query": num_query,
            "num_selected": num_selected,
            "perc_selected": round(100 * num_selected / num_query) if num_query else 0,
            "num_cursor": sum(names.count(name) for name in CURSOR_EVENTS),
            "time": round((last - first) / 60000, 2),
            "written_by_human": round(100 * self.by_user / written) if written else 0,
            "first_timestamp": first,
            "last_timestamp": last,
        }
