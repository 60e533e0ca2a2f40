"""Helpers that walk the participant's path through the Flask test client."""

from __future__ import annotations

import re

INIT_EVENT = {
    "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1_700_000_000_000,
    "textDelta": "", "cursorRange": "", "currentDoc": "", "currentCursor": 0,
    "currentSuggestions": [], "currentSuggestionIndex": 0, "currentHoverIndex": "",
    "currentN": "5", "currentMaxToken": "30", "currentTemperature": "0.3", "currentTopP": "1",
    "currentPresencePenalty": "0", "currentFrequencyPenalty": "0",
}  # fmt: skip


def start(client, **params) -> str:
    """Enter through /task and return the session id."""
    response = client.get("/task", query_string=params or {"access_code": "lab-1"})
    assert response.status_code == 302, response.data
    return response.location.split("/")[2]


def to_writing(client, session_id: str, prompt: str | None = "shapeshifter") -> None:
    """Consent, instructions and the prompt page; `prompt` None: the first prompt the page offers
    (within subjects, a prompt this participant has not written yet)."""
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert client.post(f"/s/{session_id}/instructions").status_code == 302
    if prompt is None:
        page = client.get(f"/s/{session_id}/prompt").get_data(as_text=True)
        prompt = re.search(r'name="prompt" value="([^"]+)"', page).group(1)
    response = client.post(f"/s/{session_id}/prompt", data={"prompt": prompt})
    assert response.location.endswith(f"/s/{session_id}/writing"), response.data


def post_init(client, session_id: str, doc: str = "Prompt.\n", proactive: bool = False) -> None:
    """The editor's first record; `proactive`: with the MindCopilot extension its records carry
    in a study with L1-L3 conditions (the server fills in the paradigm)."""
    event = {**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc) - 1}
    if proactive:
        event["proactive"] = {}
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": [event]}).status_code == 200


def to_survey(client, session_id: str, proactive: bool = False) -> None:
    """From writing to the survey stage: the first record, the finish and the self-evaluation."""
    post_init(client, session_id, proactive=proactive)
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    assert response.status_code == 200, response.json
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302


def finish(client, session_id: str) -> None:
    """From writing to the completion page, answering everything."""
    to_survey(client, session_id)
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
