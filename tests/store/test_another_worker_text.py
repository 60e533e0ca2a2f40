"""A batch's edits are checked against the session's whole stored text when this worker process
knows only part of it (study.server.arrival): another worker stored the writer's latest events
(it catches up on those alone), or the server restarted and knows nothing (it reads the session
before the write lock). A writer typing on is accepted with the text they see; an edit of text
that does not exist is refused, and nothing of it is stored."""

from __future__ import annotations

import pytest

from study.server import arrival

from .records import Editor, event_count
from .test_events_api import app, batch_of, client, post, session_at  # noqa: F401 - the fixtures


@pytest.fixture
def session_id(app, engine) -> str:  # noqa: F811 - the imported fixture
    return session_at(engine, app.extensions["study"], "writing")


def _another_worker_stores(client, session_id, batch: dict) -> None:  # noqa: F811
    known_here = arrival._checked.get(session_id)
    arrival._checked.clear()
    assert post(client, session_id, batch).status_code == 200
    arrival._checked.remember(session_id, known_here)


def _doc(client, session_id) -> str:  # noqa: F811
    return client.get(f"/api/sessions/{session_id}/state").get_json()["doc"]


def _past_the_end(editor: Editor) -> dict:
    """A delta no editor could send: it keeps more text than the session has. The editor is left
    as it was: the refused event takes no place in its text or its numbering."""
    doc, cursor, seq = editor.doc, editor.cursor, editor.seq
    record = editor.type("!")[0]
    record["textDelta"] = {"ops": [{"retain": len(doc) + 5}, {"insert": "?"}]}
    editor.doc, editor.cursor, editor.seq = doc, cursor, seq
    return record


def test_typing_on_after_events_another_worker_stored_is_checked_against_them(client, engine, session_id):  # noqa: F811
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("Here"))).status_code == 200
    _another_worker_stores(client, session_id, batch_of(*editor.type(" and there")))

    # Back at this worker, which remembers the text without " and there": the next characters
    # keep (retain) past what it remembers, and are accepted against what is stored.
    assert post(client, session_id, batch_of(*editor.type(", again"))).status_code == 200
    assert _doc(client, session_id) == editor.doc

    _another_worker_stores(client, session_id, batch_of(*editor.type(" and again")))
    stored = event_count(engine, session_id)
    response = post(client, session_id, batch_of(_past_the_end(editor)))
    assert response.status_code == 422, response.get_json()
    assert "impossible to replay" in response.get_json()["error"]
    assert event_count(engine, session_id) == stored
    assert _doc(client, session_id) == editor.doc


def test_after_a_restart_the_next_batch_is_checked_against_everything_stored(client, engine, session_id):  # noqa: F811
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("Before the restart"))).status_code == 200

    arrival._checked.clear()  # a new server process knows no session
    stored = event_count(engine, session_id)
    response = post(client, session_id, batch_of(_past_the_end(editor)))
    assert response.status_code == 422, response.get_json()
    assert event_count(engine, session_id) == stored

    arrival._checked.clear()
    assert post(client, session_id, batch_of(*editor.type(", and after"))).status_code == 200
    assert _doc(client, session_id) == editor.doc
