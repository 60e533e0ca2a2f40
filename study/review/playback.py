"""What the workspace's animated replay plays: the prompt, then each text change with its time
and its author, for study/static/review-replay.js to apply in the browser.

Authorship comes from the curation core's replay (study.curation.replay): prompt, writer, or an
accepted AI suggestion. That replay answers "who wrote each character of the text after event
i", and asking it for every i would cost quadratic time. Instead the session is replayed once in
a *probe* form: every text change becomes an append of the text it inserts, at the end of an
empty document, with every other event (and so the state the authorship rule reads: the shown
suggestions, a pending select, event names and sources) left untouched. The authors of the
probe's final text, segment by segment, are then the author code of each event, exactly as
study.curation.replay decides it. A change that only deletes becomes an empty retain, so it
still counts as a text change there.

The browser applies the original deltas (UTF-16 positions, as Quill and JavaScript count) with
those codes; tests check that this reproduces replay()'s final text and authors. A change that
pasted text from outside the study (study.review.pastes) takes the code OUTSIDE instead of the
writer's, so the page marks that text from the moment it arrived (the curation replay counts it
the writer's, as CoAuthor's writer share does). `play` applies the steps as the browser does,
for the final text the page shows before the replay takes over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from study.curation.replay import Document, apply_delta, from_units, replay, to_units
from study.curation.suggestions import inserted_text

NO_CHANGE = {"ops": [{"retain": 0}]}
OUTSIDE = "O"  # beside study.curation.replay's P, W and S: text pasted from outside the study


@dataclass(frozen=True)
class Step:
    """One text change: milliseconds since the session began, event index, author, delta ops."""

    t: int
    event_index: int
    author: str
    ops: list

    def as_json(self) -> list:
        return [self.t, self.event_index, self.author, self.ops]


def _changes(events: Sequence[Mapping]) -> list[int]:
    return [
        i
        for i in range(1, len(events))
        if events[i].get("textDelta") and isinstance(events[i]["textDelta"], Mapping)
    ]


def author_codes(events: Sequence[Mapping]) -> dict[int, str]:
    """event index -> author code (P/W/S of study.curation.replay) of each text change that
    inserts text. Raises what replay() raises for a session it cannot replay."""
    changes = set(_changes(events))
    probe = [{**events[0], "currentDoc": ""}]
    segments: dict[int, int] = {}  # event index -> where its text starts in the probe
    characters = units = 0  # the probe's length as Python counts it, and as Quill does
    for index in range(1, len(events)):
        event = events[index]
        if index not in changes:
            probe.append(event)
            continue
        text = inserted_text(event)
        if text:
            ops = [{"retain": units}, {"insert": text}]
            probe.append({**event, "textDelta": {"ops": ops}})
            segments[index] = characters
            characters += len(text)
            units += len(to_units(text))
        else:
            probe.append({**event, "textDelta": NO_CHANGE})
    authors = replay(probe).authors
    return {index: authors[start] for index, start in segments.items()}


def steps(events: Sequence[Mapping], outside: Set[int] = frozenset()) -> tuple[str, list[Step], Document]:
    """The prompt, every text change in order, and the final document (study.curation.replay).
    `outside`: the event indices of pastes from outside, whose text is OUTSIDE's.
    Raises ValueError or DeltaError, as replay() does, for a session that cannot be replayed."""
    final = replay(events)
    codes = author_codes(events)
    start = int(events[0].get("eventTimestamp") or 0)
    found = []
    for index in _changes(events):
        event = events[index]
        found.append(
            Step(
                t=max(int(event.get("eventTimestamp") or start) - start, 0),
                event_index=index,
                # "": the change only deletes
                author=OUTSIDE if index in outside and index in codes else codes.get(index, ""),
                ops=list(event["textDelta"].get("ops") or []),
            )
        )
    return events[0]["currentDoc"], found, final


def play(prompt: str, found: Sequence[Step]) -> tuple[str, str]:
    """The text and its author codes (one per character) after every step, applied as
    study/static/review-replay.js applies them (a change that only deletes keeps W's place)."""
    text = to_units(prompt)
    authors = "P" * len(text)
    for step in found:
        text, authors = apply_delta(text, step.ops, authors, step.author or "W")
    return from_units(text, authors)
