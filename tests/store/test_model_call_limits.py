"""The study-wide cap on model calls (study.server.model_calls) holds under a burst from many
sessions at once, on SQLite and on PostgreSQL, where requests take turns at counting and
recording through an advisory lock rather than the database's single write lock."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from study.server import create_app
from study.store import create_tables, make_engine, reading, writing
from study.store.db import suggestion_requests
from study.store.sessions import update_session
from tests.server.flow import start, to_writing


def test_a_burst_from_many_sessions_makes_no_more_calls_than_the_study_wide_cap(backend_study, engine, endpoint_factory):
    endpoint = endpoint_factory(delay=0.2)
    raw = {**backend_study.raw, "suggestions": {**backend_study.raw.get("suggestions", {}),
                                                "model_calls_per_minute": 3, "concurrent_requests": 50}}
    study = replace(backend_study, raw=raw, suggestions=replace(backend_study.suggestions, endpoint=endpoint.url))
    app = create_app(study, engine=engine)
    client = app.test_client()
    sessions = []
    for n in range(10):
        sessions.append(start(client, access_code=f"lab-{n}"))
        to_writing(client, sessions[-1])

    def ask(session_id):
        return app.test_client().post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"}).status_code

    with ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(ask, sessions))

    assert statuses.count(200) == 3 and statuses.count(429) == 7
    assert endpoint.calls == 3


def test_a_session_moved_on_elsewhere_is_refused_at_admission(backend_study, engine, endpoint_factory):
    # The worker remembers the session writing (its first suggestion) and does not read it
    # again; the admission's transaction finds it moved on (by another worker: here, directly).
    endpoint = endpoint_factory(delay=0)
    study = replace(backend_study, suggestions=replace(backend_study.suggestions, endpoint=endpoint.url))
    client = create_app(study, engine=engine).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"}).status_code == 200
    with writing(engine) as connection:
        update_session(connection, session_id, stage="survey")

    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon"})
    assert response.status_code == 409 and "writing" in response.json["error"]
    assert endpoint.calls == 1
    with reading(engine) as connection:
        assert connection.execute(select(func.count()).select_from(suggestion_requests)).scalar_one() == 1


def _when_recorded(engine, then) -> threading.Thread:
    """A thread that waits for the first model call's row, then runs `then(connection)` on it."""

    def watch():
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with reading(engine) as connection:
                if connection.execute(select(func.count()).select_from(suggestion_requests)).scalar_one():
                    break
            time.sleep(0.01)
        with writing(engine) as connection:
            then(connection)

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def test_a_call_whose_row_the_database_lost_gives_the_participant_no_suggestion(backend_study, engine, endpoint_factory, caplog):
    # The admission's COMMIT does not wait for the disk (study.server.model_calls): a database
    # that crashes then loses the row. When the outcome finds no row to settle, the participant
    # reads the calm error, not a suggestion the study has no record of, and the log says why.
    endpoint = endpoint_factory(delay=0.5)
    study = replace(backend_study, suggestions=replace(backend_study.suggestions, endpoint=endpoint.url))
    client = create_app(study, engine=engine).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    lose_the_row = _when_recorded(engine, lambda connection: connection.execute(suggestion_requests.delete()))

    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once"})
    lose_the_row.join()

    assert endpoint.calls == 1
    assert response.status_code == 502
    assert response.json == {"error": "suggestions are not available right now"}
    assert "has no row in suggestion_requests" in caplog.text


@pytest.mark.postgres
def test_later_transactions_on_an_admissions_connection_still_wait_for_the_disk(study, postgres_url, endpoint_factory):
    # Only the admission's own transaction commits without a flush: the event batches that
    # later use its pooled connection must still be on disk before they are acknowledged. (The
    # tests' cluster commits without flushing, for speed: these connections start as a
    # launch's database would.)
    engine = make_engine(postgres_url + "?options=-c%20synchronous_commit%3Don", threads=0)
    create_tables(engine)
    endpoint = endpoint_factory(delay=0)
    configured = replace(study, database_url=postgres_url,
                         suggestions=replace(study.suggestions, endpoint=endpoint.url))  # fmt: skip
    client = create_app(configured, engine=engine).test_client()
    try:
        session_id = start(client, access_code="lab-flush")
        to_writing(client, session_id)
        for doc in ("Once", "Once upon", "Once upon a"):
            assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": doc}).status_code == 200
        pooled = [engine.connect() for _ in range(engine.pool.checkedin())]
        try:
            settings = {c.exec_driver_sql("SHOW synchronous_commit").scalar_one() for c in pooled}
        finally:
            for connection in pooled:
                connection.close()
    finally:
        engine.dispose()
    assert pooled and settings == {"on"}
