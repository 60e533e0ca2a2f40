"""A worker taking a HIT: accept on the emulator, open the task URL MTurk hands out on the real
task server (Flask test client), walk every page, and submit the completion form to the
emulator's /mturk/externalSubmit as a browser would."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from html import unescape
from urllib.parse import urlsplit

import httpx

CONTROLS = {
    "currentN": "5",
    "currentMaxToken": "30",
    "currentTemperature": "0.3",
    "currentTopP": "1",
    "currentPresencePenalty": "0",
    "currentFrequencyPenalty": "0",
}


# What every walking writer types: more than [mturk] min_writer_chars (100 by default).
WRITTEN = (
    "The ninety-second little pig sealed the last seam of his house and waited; the wolf "
    "huffed, puffed, and went home to rethink his career."
)


@dataclass
class Taken:
    session_id: str
    assignment_id: str
    task_url: str
    verification_code: str | None
    submitted: httpx.Response | None


def accept(emulator_url: str, hit_id: str, worker_id: str) -> dict:
    response = httpx.post(
        f"{emulator_url}/_emulator/accept", data={"HITId": hit_id, "WorkerId": worker_id}
    )
    assert response.status_code == 200, response.text
    return response.json()


def event(seq: int, name: str, doc: str = "Prompt.\n") -> dict:
    return {
        "seq": seq,
        "eventName": name,
        "eventSource": "api" if name == "system-initialize" else "user",
        "eventTimestamp": int(time.time() * 1000),
        "textDelta": "",
        "cursorRange": "",
        "currentDoc": doc,
        "currentCursor": len(doc) - 1,
        "currentSuggestions": [],
        "currentSuggestionIndex": 0,
        "currentHoverIndex": "",
        **CONTROLS,
    }


def take_hit(
    emulator_url: str,
    task_client,
    hit_id: str,
    worker_id: str,
    *,
    ai_requests: int = 1,
    finish: bool = True,
    submit: bool = True,
    written: str = WRITTEN,
    opened_as: str | None = None,
) -> Taken:
    """`opened_as`: the worker id the task URL is opened with, edited by hand (MTurk's says
    `worker_id`, who accepted the HIT)."""
    accepted = accept(emulator_url, hit_id, worker_id)
    url = urlsplit(accepted["TaskURL"])
    query = url.query
    if opened_as is not None:
        query = query.replace(f"workerId={worker_id}", f"workerId={opened_as}")
    entered = task_client.get(f"{url.path}?{query}")
    assert entered.status_code == 302, entered.data
    session_id = entered.location.split("/")[2]
    if not finish:
        return Taken(session_id, accepted["AssignmentId"], accepted["TaskURL"], None, None)
    assert task_client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert task_client.post(f"/s/{session_id}/instructions").status_code == 302
    assert (
        task_client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"}).status_code
        == 302
    )
    events = [event(0, "system-initialize")]
    for _ in range(ai_requests):
        # Pressing Tab: the editor logs suggestion-get and the task server asks the model (the
        # server's own record of that request is what review counts).
        events.append(event(len(events), "suggestion-get"))
        asked = task_client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt."})
        assert asked.status_code == 200, asked.json
    typed = event(len(events), "text-insert")
    typed["textDelta"] = {"ops": [{"retain": len("Prompt.")}, {"insert": " " + written}]}
    events.append(typed)
    assert (
        task_client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code
        == 200
    )
    done = task_client.post(
        f"/s/{session_id}/writing/finish",
        json={"last_seq": len(events) - 1, "text": f"Prompt. {written}\n"},
    )
    assert done.status_code == 200, done.json
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert task_client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert task_client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    page = task_client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    action, fields = completion_form(page)
    submitted = httpx.post(action, data=fields) if submit else None
    return Taken(
        session_id,
        accepted["AssignmentId"],
        accepted["TaskURL"],
        fields["verificationCode"],
        submitted,
    )


def completion_form(page: str) -> tuple[str, dict[str, str]]:
    """The completion page's form: where it posts and its hidden fields."""
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    assert action, page
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return unescape(action.group(1)), {k: unescape(v) for k, v in fields.items()}
