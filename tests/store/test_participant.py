"""A writer's whole path through study.server.participant and the event API, stored in a real
database (SQLite and PostgreSQL): entry, consent, instructions, prompt, writing, self-evaluation,
survey, completion."""

from __future__ import annotations

import re

import pytest

from study.server import create_app
from study.store import reading
from study.store import events as event_store
from study.store import sessions as session_store

from .records import Editor


@pytest.fixture
def client(backend_study, engine):
    return create_app(backend_study, engine=engine, suggestion_engine=object()).test_client()


def follow(response) -> str:
    assert response.status_code in (301, 302, 303), response.get_data(as_text=True)[:500]
    return response.headers["Location"]


def session_of(url: str) -> str:
    return re.search(r"/s/([0-9a-f]{32})/", url).group(1)


def test_a_writer_goes_from_access_code_to_verification_code(client, engine, backend_study):
    consent = follow(client.get("/task?access_code=lab-7"))
    session_id = session_of(consent)
    assert consent.endswith(f"/s/{session_id}/consent")
    assert client.get(consent).status_code == 200

    instructions = follow(client.post(consent, data={"consent": "yes"}))
    prompt_page = follow(client.post(instructions))
    assert prompt_page.endswith("/prompt")
    prompt = next(p for p in backend_study.prompts if p.genre == "creative")
    assert prompt.code in client.get(prompt_page).get_data(as_text=True)

    writing_page = follow(client.post(prompt_page, data={"prompt": prompt.code}))
    assert writing_page.endswith("/writing")
    assert client.get(writing_page).status_code == 200

    # The editor posts its events in batches, one of them twice (a lost acknowledgement).
    editor = Editor(prompt.text.rstrip("\n") + "\n")
    records = [editor.initialize(), *editor.type(" The moon was late."), editor.move(-4)]
    batches = [records[i : i + 5] for i in range(0, len(records), 5)]
    for batch in batches + batches[1:2]:
        response = client.post(f"/api/sessions/{session_id}/events", json={"events": batch})
        assert response.status_code == 200
        assert response.get_json()["acked"] == [r["seq"] for r in batch]

    finish = f"/s/{session_id}/writing/finish"
    early = client.post(finish, json={"last_seq": editor.seq + 1, "text": editor.doc})
    assert early.status_code == 409
    assert early.get_json()["missing"] == [editor.seq, editor.seq + 1]
    done = client.post(finish, json={"last_seq": editor.seq - 1, "text": editor.doc})
    assert done.status_code == 200
    evaluation = done.get_json()["next"]
    assert evaluation.endswith("/evaluation")

    late = client.post(f"/api/sessions/{session_id}/events", json={"events": [editor.move(1)]})
    assert late.status_code == 409

    survey = follow(client.post(evaluation, data={"clear_ending": "yes", "collaborated": "yes"}))
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    complete = follow(client.post(survey, data=answers))
    assert complete.endswith("/complete")

    with reading(engine) as connection:
        session = session_store.get(connection, session_id)
        stored = event_store.records(connection, session_id)
    assert session["stage"] == "complete"
    assert session["access_code"] == "lab-7"
    assert session["prompt_code"] == prompt.code
    assert session["condition"] == backend_study.conditions_for("creative")[0].name
    assert session["final_text"] == editor.doc
    assert len(stored) == editor.seq - 1, "the refused late event is not stored"
    assert session["verification_code"] in client.get(complete).get_data(as_text=True)

    # Every page of the finished session now leads to the completion page.
    assert follow(client.get(writing_page)).endswith("/complete")
    assert follow(client.get("/task?access_code=lab-7")).endswith("/complete")


def test_an_access_code_holding_a_nul_character_is_a_400_naming_it_on_either_database(client, engine):
    # PostgreSQL's text cannot hold NUL: /task stopped there with a 500 (and SQLite stored it).
    response = client.get("/task?access_code=lab%00x")

    assert response.status_code == 400
    assert "query.access_code" in response.get_data(as_text=True)
    with reading(engine) as connection:
        assert session_store.all_sessions(connection) == []
