"""What the participant's browser is never told, and the server writes into its records.

A proactive session's records name its paradigm (`proactive.paradigm`, "L1".."L3", or "L0" in a
study that also has proactive conditions) and an L3 suggestion's strategy ("L1" or "L2"). Sent
to the page, those names unblind the comparison: a writer who reads "L2" in the page source or
in an answer knows their arm (issue 25). So the page and the ghost-text API carry behaviour
only (stateful history, staged threshold) and the event API fills the names in from the
session's condition and the server's record of each suggestion, before the batch is checked.
A value the browser did send is left for the batch check, which compares it with the session.
"""

from __future__ import annotations

import json

from sqlalchemy import select

from study.config import Condition
from study.store import reading
from study.store.db import suggestion_requests


def fill_proactive(engine, session_id: str, condition: Condition, body: object) -> None:
    """Give every record of `body` (an event batch, as parsed) that carries the proactive
    extension its paradigm, and each suggestion-open its strategy, in place. Anything not
    shaped like a batch is left as it is for the schema check to name."""
    if not isinstance(body, dict) or not isinstance(body.get("events"), list):
        return
    extensions = [
        (event, event["proactive"]) for event in body["events"]
        if isinstance(event, dict) and isinstance(event.get("proactive"), dict)
    ]  # fmt: skip
    opened = {}
    for event, extension in extensions:
        extension.setdefault("paradigm", condition.paradigm)
        suggestion_id = extension.get("suggestionId")
        if event.get("eventName") == "suggestion-open" and "strategy" not in extension and type(suggestion_id) is int:
            opened.setdefault(suggestion_id, []).append(extension)
    if opened:
        for suggestion_id, strategy in _strategies(engine, session_id, list(opened)).items():
            for extension in opened[suggestion_id]:
                extension["strategy"] = strategy


def _strategies(engine, session_id: str, suggestion_ids: list[int]) -> dict[int, str]:
    """The strategy each of this session's suggestions was made with, as the ghost-text API
    recorded it (study.paradigms.proactive.api)."""
    with reading(engine) as connection:
        rows = connection.execute(
            select(suggestion_requests.c.id, suggestion_requests.c.parameters)
            .where(suggestion_requests.c.session_id == session_id)
            .where(suggestion_requests.c.id.in_(suggestion_ids))
        ).all()
    found = {}
    for row in rows:
        strategy = json.loads(row.parameters or "{}").get("strategy")
        if isinstance(strategy, str):
            found[row.id] = strategy
    return found
