"""The study-wide cap on model calls (study.server.model_calls) holds under a burst from many
sessions at once, on SQLite and on PostgreSQL, where requests take turns at counting and
recording through an advisory lock rather than the database's single write lock."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from sqlalchemy import func, select

from study.server import create_app
from study.store import reading, writing
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
