"""Table 5 of MindCopilot (§5.3): per paradigm, window switches, editing time and acceptance,
"averaged across all users" of the paradigm, with the counts behind them.

Definitions (the paper names the columns and leaves them undefined; spec A3.3):

- editing time (min): from the session's first event (system-initialize of the writing page)
  to its last (the writer's last action before Finish), wall clock; `active` leaves out the
  time the page was blurred (window-blur to the next window-focus).
- window switches: times the writing page lost focus to another window or tab (window-blur),
  reading (a) of the spec; an L0 session also counts its switches between the editor and the
  assistant panel (panel-focus), reading (b), in their own column.
- acceptance: study.paradigms.proactive.metrics.acceptance.DEFINITION, the one definition every
  section of `study report` and `study curate proactive` uses. L0 has none ("-" in Table 5).
- modify rate: accepted suggestions the writer then edited inside their span, of those accepted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from study.paradigms.proactive.metrics.acceptance import ACCEPTED, acceptance_rate


@dataclass(frozen=True)
class SessionFigures:
    session_id: str
    paradigm: str
    editing_minutes: float
    active_minutes: float
    window_switches: int
    panel_switches: int
    chat_requests: int  # L0: requests the writer sent to the assistant panel


def session_figures(events: Sequence[Mapping], session_id: str, paradigm: str) -> SessionFigures:
    """One session's Table 5 figures from its extended log (events in line order)."""
    first, last = int(events[0]["eventTimestamp"]), int(events[-1]["eventTimestamp"])
    blurred, blurred_since = 0, None
    switches = panels = requests = 0
    for event in events:
        name, at = event["eventName"], int(event["eventTimestamp"])
        if name == "window-blur":
            switches += 1
            if blurred_since is None:
                blurred_since = at
        elif name == "window-focus" and blurred_since is not None:
            blurred += at - blurred_since
            blurred_since = None
        elif name == "panel-focus":
            panels += 1
        elif name == "chat-send":
            requests += 1
    if blurred_since is not None:  # still away when the log ends
        blurred += last - blurred_since
    return SessionFigures(
        session_id=session_id, paradigm=paradigm, editing_minutes=(last - first) / 60000,
        active_minutes=(last - first - blurred) / 60000, window_switches=switches,
        panel_switches=panels, chat_requests=requests,
    )  # fmt: skip


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def table5(sessions: Iterable[SessionFigures], outcomes: Iterable[tuple[str, str]]) -> list[dict]:
    """One row per paradigm (sorted by name), then "all". `outcomes`: (session id, outcome) per
    suggestion, outcomes as in SuggestionRecord. Means are over the paradigm's sessions; the
    acceptance macro is the mean of per-session rates of sessions shown a suggestion."""
    sessions = list(sessions)
    by_session: dict[str, list[str]] = {}
    for session_id, outcome in outcomes:
        by_session.setdefault(session_id, []).append(outcome)
    groups = {p: [s for s in sessions if s.paradigm == p] for p in sorted({s.paradigm for s in sessions})}
    groups["all"] = sessions
    rows = []
    for paradigm, members in groups.items():
        mine = [(s.session_id, o) for s in members for o in by_session.get(s.session_id, [])]
        rate = acceptance_rate(mine)
        accepted = [o for _, o in mine if o in ACCEPTED]
        rows.append({
            "paradigm": paradigm, "sessions": len(members),
            "editing_minutes": _mean([s.editing_minutes for s in members]),
            "active_minutes": _mean([s.active_minutes for s in members]),
            "window_switches": _mean([s.window_switches for s in members]),
            "panel_switches": _mean([s.panel_switches for s in members]),
            "chat_requests": _mean([s.chat_requests for s in members]),
            "shown": rate.shown, "accepted": rate.accepted,
            "acceptance_macro": rate.macro, "acceptance_micro": rate.micro,
            "modify_rate": 100 * accepted.count("accepted_modified") / len(accepted) if accepted else math.nan,
        })  # fmt: skip
    return rows
