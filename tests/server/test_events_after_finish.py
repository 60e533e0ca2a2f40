"""A worker process remembers the sessions it has seen writing, so their batches are stored
without reading the session first (study.server.events_api). When the writer finishes at
another worker, this one's memory is out of date: a new event is still refused and nothing is
stored after the finish, because each batch's stage is confirmed under the lock that stores it."""

from __future__ import annotations

from study.server import create_app
from study.store import events as event_store
from study.store import reading
from tests.server.flow import INIT_EVENT, post_init, start, to_writing

TYPED = {
    **INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
    "textDelta": {"ops": [{"retain": 7}, {"insert": "!"}]}, "currentDoc": "", "currentCursor": 8,
}  # fmt: skip


def stored(app, session_id: str) -> list[int]:
    with reading(app.extensions["study.engine"]) as connection:
        return event_store.stored_seqs(connection, session_id)


def test_a_batch_after_the_writer_finished_at_another_worker_is_refused(study, client):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)  # this worker now knows the session as writing

    other_worker = create_app(study, suggestion_engine=object()).test_client()
    finished = other_worker.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    assert finished.status_code == 200, finished.json

    late = client.post(f"/api/sessions/{session_id}/events", json={"events": [TYPED]})
    assert late.status_code == 409 and "takes no new events" in late.json["error"]
    assert stored(client.application, session_id) == [0]
    resent = client.post(
        f"/api/sessions/{session_id}/events", json={"events": [{**INIT_EVENT, "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}]}
    )
    assert resent.status_code == 200 and resent.json["acked"] == [0] and resent.json["duplicates"] == 1


def test_a_remembered_session_goes_on_storing_its_batches(study, client):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    typed = client.post(f"/api/sessions/{session_id}/events", json={"events": [TYPED]})
    assert typed.status_code == 200 and typed.json["stored"] == 1
    assert stored(client.application, session_id) == [0, 1]
