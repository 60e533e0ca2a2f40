"""Acceptance rate of shown proactive suggestions (MindCopilot Table 5, §5.3).

Per writer (session) and paradigm: accepted suggestions / suggestions shown; Table 5's
caption averages "across all users", so `macro` is the mean of per-session rates, and `micro`
the pooled rate (spec A3.3: report both). Accepted-then-modified and partly accepted
suggestions count as accepted; stale answers, never shown, are not in the denominator.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

ACCEPTED = ("accepted", "accepted_modified", "partial")
# The one definition every report section and `study curate proactive` states and uses
# (issue 21: a partial accept logs one suggestion-select per Ctrl+Right word, which counted
# per event gave one condition two different rates).
DEFINITION = (
    "Acceptance: suggestions the writer accepted, of the suggestions shown. A suggestion counts "
    "once, as accepted, when the writer took any of it: whole with Tab, partly word by word with "
    "Ctrl+Right (however many words), or accepted and then edited; answers that came too late "
    "to be shown (stale) are not counted. Per writer it is accepted / shown; macro is the mean "
    "of the writers' rates (Table 5's \"averaged across all users\"), micro the pooled rate."
)
SHOWN = ACCEPTED + ("rejected", "ignored")


@dataclass(frozen=True)
class Acceptance:
    micro: float  # percent, NaN when nothing was shown
    macro: float
    shown: int
    accepted: int
    sessions: int


def acceptance_rate(outcomes: Iterable[tuple[str, str]]) -> Acceptance:
    """`outcomes`: (session id, outcome) per suggestion, outcomes as in SuggestionRecord."""
    per_session: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for session, outcome in outcomes:
        if outcome not in SHOWN:
            continue
        counts = per_session[session]
        counts[0] += 1
        counts[1] += outcome in ACCEPTED
    shown = sum(c[0] for c in per_session.values())
    accepted = sum(c[1] for c in per_session.values())
    rates = [100 * a / s for s, a in per_session.values() if s]
    return Acceptance(
        micro=100 * accepted / shown if shown else math.nan,
        macro=sum(rates) / len(rates) if rates else math.nan,
        shown=shown, accepted=accepted, sessions=len(per_session),
    )
