"""Text from outside the study, as a reviewer is shown it: each paste, and how much of the final
text it left.

What counts as outside is study.curation.origin's rule, the one `study curate stats`, releases
and `study mturk review` read: a `user` insert of 20 characters or more, in one event, of text
the session never held (not the writer's own text copied inside the editor, not a suggestion,
not an assistant reply or L0 panel response). The editor cannot log what the clipboard held, so
the log is the evidence, whatever `[session] outside_paste` says: a reviewer judging whether
the writer wrote the text sees such pastes even in a study that lets them in.

The replay marks the text each paste inserted (study.review.playback's author code "O"), and
the list says when it came, how long it was and whether the writer had just switched back from
another window (`window-focus`, logged where the study watches pastes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.curation.origin import origin


@dataclass(frozen=True)
class Paste:
    t: int  # milliseconds since the session began, as the replay counts them
    event_index: int
    chars: int
    after_window_switch: bool
    preview: str  # its first 60 characters

    def describe(self) -> str:
        switch = ", right after the writer came back from another window" if self.after_window_switch else ""
        return f"{self.chars} characters at once{switch}"


@dataclass(frozen=True)
class Pastes:
    share: float  # percent of the final text (prompt excluded) from outside; NaN: none beyond it
    pastes: tuple[Paste, ...] = ()

    def event_indices(self) -> frozenset[int]:
        return frozenset(paste.event_index for paste in self.pastes)

    def summary(self) -> str:
        """The statistic: how much of the final text came from outside, and in how many pastes."""
        if not self.pastes:
            return "none"
        count = f"{len(self.pastes)} paste{'s' if len(self.pastes) != 1 else ''}"
        left = "none left" if math.isnan(self.share) else f"{self.share:.0f}% of the final text"
        return f"{left} ({count})"


def find(events: Sequence[Mapping], assistant_texts: Sequence[str] = ()) -> Pastes:
    """The session's pastes from outside. Raises as study.curation.replay.replay does for a log
    that cannot be replayed (ValueError, DeltaError)."""
    found = origin(events, assistant_texts=assistant_texts)
    start = events[0].get("eventTimestamp") if events else None
    start = start if type(start) is int else 0
    return Pastes(
        share=found.share("outside"),
        pastes=tuple(
            Paste(
                t=max((insert.timestamp or start) - start, 0),
                event_index=insert.event_index,
                chars=insert.chars,
                after_window_switch=insert.after_window_switch,
                preview=insert.preview,
            )
            for insert in found.inserts
        ),
    )
