"""What the participant's browser receives names neither the condition's decoding settings nor
its paradigm (README, "The editor and its log"; issue 25): the writing page's boot data carries
no temperature, penalties, top_p or max_tokens, and the event API's refusals do not name the
paradigm level. The researcher's log still records every setting: the server fills them in."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from study.server import create_app
from study.store import events as event_store
from study.store import make_engine, reading
from tests.server.flow import INIT_EVENT, start, to_writing

HIDDEN = ("currentMaxToken", "currentTemperature", "currentTopP", "currentPresencePenalty", "currentFrequencyPenalty")


def _boot(client, session_id: str) -> dict:
    page = client.get(f"/s/{session_id}/writing").get_data(as_text=True)
    return json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])


def test_the_writing_page_does_not_tell_two_arms_apart_by_their_decoding_settings(study):
    # The paper's creative arms differ only in temperature and frequency penalty.
    low, high = study.condition("creative-low"), study.condition("creative-high")
    assert low.controls()["currentTemperature"] != high.controls()["currentTemperature"]
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    sessions = []
    for code in ("lab-1", "lab-2"):  # the balanced rule gives them the two creative arms
        session_id = start(client, access_code=code)
        to_writing(client, session_id)
        sessions.append(session_id)
    boots = [_boot(client, session_id) for session_id in sessions]
    for boot in boots:
        page_text = json.dumps(boot)
        assert all(boot["controls"].get(key, "") == "" for key in HIDDEN), boot["controls"]
        assert not re.search(r"0\.75|0\.3\b", page_text), page_text
    assert boots[0]["controls"] == boots[1]["controls"]

    # The browser logs what its page gave it; the stored record has the arm's real settings.
    for session_id, boot in zip(sessions, boots):
        event = {**INIT_EVENT, **boot["controls"], "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}
        answer = client.post(f"/api/sessions/{session_id}/events", json={"events": [event]})
        assert answer.status_code == 200, answer.json
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        stored = [event_store.records(connection, session_id)[0] for session_id in sessions]
    engine.dispose()
    for record, condition in zip(stored, (low, high)):
        assert {key: record[key] for key in HIDDEN} == {key: condition.controls()[key] for key in HIDDEN}


def test_an_event_refusal_does_not_name_the_sessions_paradigm(study, model_url):
    conditions = tuple(replace(c, paradigm="L2", mode="chat") for c in study.conditions)
    study = replace(study, conditions=conditions, suggestions=replace(study.suggestions, endpoint=model_url))
    client = create_app(study).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    event = {**INIT_EVENT, "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}
    for extension in ({}, {"proactive": {"paradigm": "L0"}}):
        answer = client.post(f"/api/sessions/{session_id}/events", json={"events": [{**event, **extension}]})
        assert answer.status_code == 422
        assert "L2" not in answer.get_data(as_text=True), answer.json["error"]
