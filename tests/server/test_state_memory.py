"""GET /api/sessions/<id>/state gives a proactive session's interaction memory, rebuilt from the
stored events, so a browser that lost its saved copy carries on with L2's history."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from study.server import create_app
from study.store import writing
from study.store.db import suggestion_requests
from tests.server.flow import start, to_writing

RECORDED = Path(__file__).parents[1] / "suggest" / "data" / "l2-session.json"


def _session_with_events(study, paradigm: str, events: list[dict]) -> tuple[object, str]:
    conditions = tuple(replace(c, paradigm=paradigm) for c in study.conditions)
    app = create_app(replace(study, conditions=conditions))
    client = app.test_client()
    session_id = start(client, access_code="lab-1")
    to_writing(client, session_id)
    _issue_recorded_suggestions(app, session_id, events)
    batch = [{**event, "seq": seq} for seq, event in enumerate(events)]
    response = client.post(f"/api/sessions/{session_id}/events", json={"events": batch})
    assert response.status_code == 200, response.json
    return client, session_id


def _issue_recorded_suggestions(app, session_id: str, events: list[dict]) -> None:
    # The event API takes only suggestions this server returned to this session (issue 21):
    # the recording's are stored as if this server had answered them.
    rows = [
        {"id": e["proactive"]["suggestionId"], "session_id": session_id, "created_at": time.time(),
         "condition": "recorded", "model": "recorded", "parameters": "{}", "raw": "[]",
         "suggestions": json.dumps(e["currentSuggestions"]), "error": None}
        for e in events if e["eventName"] == "suggestion-open"
    ]  # fmt: skip
    if rows:
        with writing(app.extensions["study.engine"]) as connection:
            connection.execute(suggestion_requests.insert(), rows)


def test_the_state_of_an_l2_session_carries_the_history_its_editor_sent(study):
    recorded = json.loads(RECORDED.read_text())
    client, session_id = _session_with_events(study, "L2", recorded["events"])
    state = client.get(f"/api/sessions/{session_id}/state").json
    assert state["doc"] == recorded["request"]["doc"] + "\n"
    assert state["proactive"]["history"] == recorded["request"]["history"]
    assert [o for o in state["proactive"]["outcomes"] if o != "shown"] == recorded["request"]["outcomes"]


def test_a_coauthor_session_state_has_no_proactive_memory(study):
    recorded = json.loads(RECORDED.read_text())
    plain = [{k: v for k, v in e.items() if k != "proactive"} for e in recorded["events"][:3]]
    client, session_id = _session_with_events(study, "L0", plain)
    state = client.get(f"/api/sessions/{session_id}/state").json
    assert state["next_seq"] == 3 and "proactive" not in state
