"""The study-wide cap on model calls (study.server.model_calls) holds under a burst from many
sessions at once, on SQLite and on PostgreSQL, where requests take turns at counting and
recording through an advisory lock rather than the database's single write lock."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from study.server import create_app
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
