"""Human post-editing instances from CoAuthor logs: KED's validation data (MindCopilot §4.2).

Each instance is an accepted suggestion that the writer then edited (Fig. 3: "a human
post-editing instance"): the accepted text s, its final text y (at the next suggestion-get or
the end; spec A3.2 [I]), and the editing duration, reading (a) t(last edit touching the span) -
t(suggestion-select), and reading (b) the sum of gaps between consecutive touching edits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.paradigms.proactive.curation.spans import track_accepted


@dataclass(frozen=True)
class PostEdit:
    session_id: str
    suggestion: str
    final: str
    duration_seconds: float  # reading (a)
    gap_seconds: float  # reading (b)
    edits: int


def post_edit_instances(events: Sequence[Mapping], session_id: str = "") -> list[PostEdit]:
    out = []
    for span in track_accepted(events):
        if not span.touches or span.final is None or span.final == span.text:
            continue
        out.append(PostEdit(
            session_id=session_id, suggestion=span.text, final=span.final,
            duration_seconds=(span.touches[-1] - span.accepted_at) / 1000,
            gap_seconds=sum(b - a for a, b in zip(span.touches, span.touches[1:])) / 1000,
            edits=len(span.touches),
        ))
    return out
