"""A writer's next batch on PostgreSQL is stored in one round trip when its worker stored the
session's last one (study.store.events.ingest, "in one round trip"), and whatever another
worker did meanwhile still counts: a session it finished takes no new events, and a batch is
checked against the events it stored (tests/store/test_stored_counts.py)."""

from __future__ import annotations

import pytest

from study.store import writing
from study.store import sessions as session_store

from .records import Editor, event_count
from .test_events_api import app, batch_of, client, post, session_id  # noqa: F401 - fixtures


def test_a_writers_next_batch_is_one_round_trip(client, engine, session_id, monkeypatch):  # noqa: F811
    if engine.dialect.name != "postgresql":
        pytest.skip("round trips are PostgreSQL's")
    pg_rounds = pytest.importorskip("study.store.pg_rounds")
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("The fox"))).status_code == 200
    rounds = []
    send = pg_rounds.send
    monkeypatch.setattr(pg_rounds, "send", lambda *args, **kwargs: rounds.append(args) or send(*args, **kwargs))

    response = post(client, session_id, batch_of(*editor.type(" ran.")))

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["stored"] == 5
    assert len(rounds) == 1
    assert event_count(engine, session_id) == 13


def test_a_session_finished_at_another_worker_takes_no_new_events(client, engine, session_id):  # noqa: F811
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("Done"))).status_code == 200
    # Another worker process finishes the session; this one still remembers it at writing.
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, stage="survey")

    response = post(client, session_id, batch_of(*editor.type(" and more")))

    assert response.status_code == 409, response.get_json()
    assert "survey" in response.get_json()["error"]
    assert event_count(engine, session_id) == 5
