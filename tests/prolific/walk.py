"""A participant on Prolific: take part on the emulator, open the study URL Prolific hands out
on the real task server (Flask test client), walk every page, and follow the completion
redirect back to the emulator's completion URL as a browser would."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from tests.mturk.walk import WRITTEN, event


@dataclass
class Took:
    session_id: str
    submission_id: str
    participant_id: str
    completion: str | None  # where the completion page sent the participant


def join(prolific, study_id: str, participant_id: str) -> dict:
    answer = httpx.post(prolific.url + "/_emulator/take-part",
                        json={"study_id": study_id, "participant_id": participant_id})  # fmt: skip
    assert answer.status_code == 201, answer.text
    return answer.json()


def take_part(prolific, task_client, study_id: str, participant_id: str, *, ai_requests: int = 1,
              finish: bool = True, come_back: bool = True, written: str = WRITTEN,
              opened_as: str | None = None) -> Took:  # fmt: skip
    """`opened_as`: the PID the study URL is opened with, edited by hand (Prolific's says
    `participant_id`, who took part)."""
    joined = join(prolific, study_id, participant_id)
    url = urlsplit(joined["url"])
    query = url.query
    if opened_as is not None:
        query = query.replace(f"PROLIFIC_PID={participant_id}", f"PROLIFIC_PID={opened_as}")
    entered = task_client.get(f"{url.path}?{query}")
    assert entered.status_code == 302, entered.get_data(as_text=True)
    session_id = entered.location.split("/")[2]
    took = Took(session_id, joined["submission_id"], participant_id, None)
    if not finish:
        return took
    assert task_client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert task_client.post(f"/s/{session_id}/instructions").status_code == 302
    prompt = task_client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"})
    assert prompt.status_code == 302
    events = [event(0, "system-initialize")]
    for _ in range(ai_requests):
        events.append(event(len(events), "suggestion-get"))
        asked = task_client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt."})
        assert asked.status_code == 200, asked.json
    typed = event(len(events), "text-insert")
    typed["textDelta"] = {"ops": [{"retain": len("Prompt.")}, {"insert": " " + written}]}
    events.append(typed)
    stored = task_client.post(f"/api/sessions/{session_id}/events", json={"events": events})
    assert stored.status_code == 200
    done = task_client.post(f"/s/{session_id}/writing/finish",
                            json={"last_seq": len(events) - 1, "text": f"Prompt. {written}\n"})  # fmt: skip
    assert done.status_code == 200, done.json
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert task_client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert task_client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    complete = task_client.get(f"/s/{session_id}/complete")
    assert complete.status_code == 302, complete.get_data(as_text=True)
    took.completion = complete.location
    if come_back:  # the browser follows the redirect to Prolific, which knows the participant
        back = httpx.get(f"{complete.location}&participant_id={participant_id}")
        assert back.status_code == 200, back.text
    return took
