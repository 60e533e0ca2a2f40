"""A chat arm's editor log says what its writer had: no Tab list, so none of the Tab list's
settings. Its records carry the six `current*` controls empty, as a control arm's do (the
CoAuthor schema allows ""), not the condition's n of 5 and decoding defaults, which would read
as if the chat arm had offered lists of five suggestions; the chat assistant's own settings are
in arms.json and beside the conversation (study.paradigms.chat.release)."""

from __future__ import annotations

import json

import pytest

from study.curation.formats import CONTROL_KEYS
from study.server import create_app
from study.store import events as event_store
from study.store import reading
from tests.chat.flow import chat_arm_study
from tests.server.flow import INIT_EVENT, start, to_writing

EMPTY = {key: "" for key in CONTROL_KEYS}


@pytest.fixture
def endpoint(endpoint_factory):
    return endpoint_factory()


def _boot(client, session_id: str) -> dict:
    page = client.get(f"/s/{session_id}/writing").get_data(as_text=True)
    return json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])


def test_a_chat_arms_page_and_stored_log_carry_no_tab_settings(tmp_path, endpoint):
    study = chat_arm_study(tmp_path / "study", endpoint.url)
    (condition,) = study.conditions
    assert condition.controls()["currentN"] == "5"  # the condition's Tab default, which it never used
    app = create_app(study)
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id)

    boot = _boot(client, session_id)
    assert "chat" in boot and {key: boot["controls"][key] for key in CONTROL_KEYS} == EMPTY

    # A page served before the change (or a tampered one) still sends currentN 5: the server
    # writes what the session had.
    event = {**INIT_EVENT, **boot["controls"], "currentN": "5", "currentTemperature": "0.9", "seq": 0,
             "currentDoc": "Prompt.\n", "currentCursor": 7}  # fmt: skip
    answer = client.post(f"/api/sessions/{session_id}/events", json={"events": [event]})
    assert answer.status_code == 200, answer.json
    with reading(app.extensions["study.engine"]) as connection:
        (record,) = event_store.records(connection, session_id)
    app.extensions["study.engine"].dispose()
    assert {key: record[key] for key in CONTROL_KEYS} == EMPTY
