"""A batch is checked against what its session has stored, counted from the last state this worker
process committed (study.store.events.ingest `known`, study.server.arrival): the count must stay
exact when another worker stored events meanwhile, and when a batch's transaction failed after
its checks had passed."""

from __future__ import annotations

import pytest

from study.server import arrival
from study.store import events as event_store

from .records import Editor, event_count
from .test_events_api import batch_of, post, session_at
from .test_events_hostile import small_quota_app  # noqa: F401 - a study storing at most 100 events

QUOTA = 100  # small_quota_app's; the session's three batches fill it


@pytest.fixture
def app(small_quota_app):  # noqa: F811 - the imported fixture
    return small_quota_app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def session_id(app, engine) -> str:
    return session_at(engine, app.extensions["study"], "writing")


def _quota_refusal(client, session_id, editor: Editor) -> str:
    response = post(client, session_id, batch_of(*editor.type("!")))
    assert response.status_code == 422, response.get_json()
    return response.get_json()["error"]


def _stored_at_another_worker(client, session_id, batch: dict) -> None:
    """The writer's next batch reaches another worker process, which has not seen the session;
    the one after comes back here, where the session is known as it was before."""
    known_here = arrival._checked.get(session_id)
    arrival._checked.clear()
    assert post(client, session_id, batch).status_code == 200
    arrival._checked.remember(session_id, known_here)


def test_events_another_worker_stored_are_counted(client, engine, session_id):
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("a" * 39))).status_code == 200
    _stored_at_another_worker(client, session_id, batch_of(*editor.type("b" * 30)))
    assert post(client, session_id, batch_of(*editor.type("c" * 30))).status_code == 200

    assert event_count(engine, session_id) == QUOTA
    assert client.get(f"/api/sessions/{session_id}/state").get_json()["doc"] == editor.doc
    assert f"has stored {QUOTA} events" in _quota_refusal(client, session_id, editor)


def test_a_batch_is_checked_against_what_another_worker_stored(client, engine, session_id):
    # On PostgreSQL a batch is checked before its transaction against what this worker knows
    # (study.store.events.ingest, "in one round trip"): here 10 events where 90 are stored.
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("a" * 9))).status_code == 200
    _stored_at_another_worker(client, session_id, batch_of(*editor.type("b" * 80)))
    # Typed at the start of the text, it reads the same against either: only the count differs.
    editor.cursor = 0
    response = post(client, session_id, batch_of(editor.move(-1), *editor.type("c" * 14)))

    assert response.status_code == 422, response.get_json()
    assert f"has stored {QUOTA - 10} events" in response.get_json()["error"]
    assert event_count(engine, session_id) == QUOTA - 10


def test_a_batch_whose_transaction_failed_is_not_counted(app, engine, session_id):
    limits = app.extensions["study.limits"]

    def store(batch: list[dict], fail: bool = False):
        checks = arrival.checker(session_id, batch, limits)

        def check(*args):
            checks.check(*args)
            if fail:
                raise OSError("disk I/O error")  # e.g. the database could not write the batch

        result = event_store.ingest(engine, session_id, batch, check, known=checks.known)
        checks.committed()
        return result

    editor = Editor()
    store([editor.initialize(), *editor.type("a" * 39)])
    second = editor.type("b" * 30)
    with pytest.raises(OSError):
        store(second, fail=True)
    assert event_count(engine, session_id) == 40

    # The browser sends the batch again with what was typed since: the quota has room for it.
    again = second + editor.type("c" * 30)
    assert store(again).stored == 60
    assert event_count(engine, session_id) == QUOTA
