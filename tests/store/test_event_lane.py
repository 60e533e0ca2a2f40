"""study.server.event_lane: the event API answers a browser the same whether a batch takes the
fast lane or goes through Flask, good batches and bad requests alike, and the lane's requests
are counted for `study status` as Flask's are."""

from __future__ import annotations

import gc
import threading
import time

import orjson
import pytest
from werkzeug.test import Client, EnvironBuilder

from study.server import create_app, events_api
from study.server.event_lane import EventLane
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.activity import recent

from .records import event_count
from .test_events_api import events_url, session_at, typed


@pytest.fixture
def app(backend_study, engine):
    return create_app(backend_study, engine=engine, suggestion_engine=object())


@pytest.fixture
def paths(app):
    """(the app as served: the lane in front, Flask alone: what the lane hands on to)."""
    assert isinstance(app.wsgi_app, EventLane)
    return app.test_client(), Client(app.wsgi_app.flask_wsgi)


def answers(paths, engine, study, stage, request):
    """The (status, content type, length, JSON body) each path gives for
    `request(client, session_id, engine)`, each on a session of its own at `stage`."""
    found = []
    for client in paths:
        response = request(client, session_at(engine, study, stage), engine)
        body = response.get_data()
        found.append((response.status_code, response.headers.get("Content-Type"),
                      response.headers.get("Content-Length"), len(body), orjson.loads(body)))  # fmt: skip
    return found


def post_json(body, path=events_url, query=""):
    def request(client, session_id, _engine):
        return client.post(path(session_id) + query, data=orjson.dumps(body), content_type="application/json")

    return request


GOOD = {"events": typed("Same answer")}


def resent_after_writing(client, session_id, engine):
    """A batch stored while the session was at writing, sent again once it has finished: 200,
    all duplicates."""
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, stage="writing")
    post_json(GOOD)(client, session_id, engine)
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, stage="finished")
    return post_json(GOOD)(client, session_id, engine)


@pytest.mark.parametrize(
    "stage, request_",
    [
        ("writing", post_json(GOOD)),
        ("writing", post_json({"events": typed("x")[:1] + [{"seq": 1, "eventName": "text-insert"}]})),
        ("writing", post_json({"events": []})),
        # Passes the door, refused by the arrival checks (422): events before the session's start.
        ("writing", post_json({"events": typed("Early")[3:]})),
        ("writing", post_json(GOOD, query="?debug=1")),
        ("writing", post_json(GOOD, path=lambda session_id: events_url("0" * 32))),
        ("writing", post_json(GOOD, path=lambda session_id: events_url("not-a-session"))),
        ("finished", post_json(GOOD)),
        ("finished", resent_after_writing),
        (
            "writing",
            lambda client, session_id, _engine: client.post(
                events_url(session_id), data=b'{"events": [', content_type="application/json"
            ),
        ),
        (
            "writing",
            lambda client, session_id, _engine: client.post(
                events_url(session_id), data=b"x" * 10_000_000, content_type="application/json"
            ),
        ),
        (
            "writing",  # "²" passes str.isdigit, not int()
            lambda client, session_id, _engine: client.post(
                events_url(session_id), data=orjson.dumps(GOOD), content_type="application/json",
                environ_overrides={"CONTENT_LENGTH": "\u00b2"},
            ),
        ),
    ],
    ids=["good", "schema", "empty", "refused", "query", "unknown", "malformed-id", "closed", "closed-resend", "not-json",
         "too-big", "length-not-a-number"],
)
def test_both_paths_give_a_browser_the_same_answer(paths, engine, backend_study, stage, request_):
    lane, flask_alone = answers(paths, engine, backend_study, stage, request_)
    assert lane == flask_alone


def test_a_resent_batch_is_acknowledged_as_duplicates_on_the_lane(app, engine, backend_study):
    client = app.test_client()
    session_id = session_at(engine, backend_study, "writing")
    body = orjson.dumps(GOOD)
    first = client.post(events_url(session_id), data=body, content_type="application/json")
    again = client.post(events_url(session_id), data=body, content_type="application/json")

    assert first.status_code == again.status_code == 200
    assert again.get_json() == {"acked": first.get_json()["acked"], "stored": 0, "duplicates": len(GOOD["events"])}
    assert event_count(engine, session_id) == len(GOOD["events"])


def test_the_lanes_requests_count_as_event_requests_for_study_status(app, engine, backend_study):
    client = app.test_client()
    session_id = session_at(engine, backend_study, "writing")
    recorder = app.extensions["study.activity"]

    response = client.post(events_url(session_id), data=orjson.dumps(GOOD), content_type="application/json")

    assert response.status_code == 200
    assert recorder.current.event_requests == 1
    assert recorder.current.requests == 1


def test_the_lane_stores_its_process_activity_once_an_interval_is_over(app, engine, backend_study):
    # `study status` reads the stored intervals: the lane's answer stores a finished one once
    # it is sent, as Flask's after-request hook has it stored.
    client = app.test_client()
    session_id = session_at(engine, backend_study, "writing")
    recorder = app.extensions["study.activity"]
    recorder.seconds = 0  # every request ends an interval

    response = client.post(events_url(session_id), data=orjson.dumps(GOOD), content_type="application/json")
    response.close()

    assert response.status_code == 200
    with reading(engine) as connection:
        found = recent(connection, "no outcome", 40)
    assert (found.requests, found.event_requests) == (1, 1)


def test_only_a_well_formed_batch_takes_the_lane(app, engine, backend_study):
    through_flask = []
    # First among the hooks: the door's check stops the later ones when it refuses.
    app.before_request_funcs.setdefault(None, []).insert(0, lambda: through_flask.append(1))
    client = app.test_client()
    session_id = session_at(engine, backend_study, "writing")

    client.post(events_url(session_id), data=orjson.dumps(GOOD), content_type="application/json")
    assert through_flask == []
    client.post(events_url(session_id) + "?x=1", data=orjson.dumps(GOOD), content_type="application/json")
    assert through_flask == [1]


@pytest.mark.parametrize("limit", [None, 1])
def test_a_limited_lane_handles_one_batch_at_a_time(app, engine, backend_study, monkeypatch, limit):
    # `study serve` limits the lane to its --threads: the threads it adds for model calls are
    # not taken by batches. Without a limit, batches are handled side by side.
    inside, most = [0], [0]
    lock = threading.Lock()
    store = events_api.acknowledge

    def slow_store(*arguments):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.05)
        try:
            return store(*arguments)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(events_api, "acknowledge", slow_store)
    if limit:
        app.wsgi_app.limit(limit)
    sessions = [session_at(engine, backend_study, "writing") for _ in range(3)]
    codes = []

    def post(session_id):
        response = app.test_client().post(events_url(session_id), data=orjson.dumps(GOOD), content_type="application/json")
        codes.append(response.status_code)

    threads = [threading.Thread(target=post, args=(session_id,)) for session_id in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [200, 200, 200]
    assert most[0] == (1 if limit else 3)


def test_a_stored_batch_is_freed_as_soon_as_it_is_answered(app, engine, backend_study):
    # No reference cycle holds a batch once it is answered: its records go back to the memory
    # allocator at once, not at the garbage collector's next pass, which at a launch had
    # hundreds of them to go through each time (docs/benchmarks.md).
    session_id = session_at(engine, backend_study, "writing")
    events = typed("Freed at once")
    batches = [events[i : i + 4] for i in range(0, len(events), 4)]
    statuses = []
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a pass finds unreachable is kept in gc.garbage
    try:
        for batch in batches:
            environ = EnvironBuilder(events_url(session_id), method="POST", data=orjson.dumps({"events": batch}),
                                     content_type="application/json").get_environ()  # fmt: skip
            answer = app.wsgi_app(environ, lambda status, headers, exc_info=None: statuses.append(status))
            b"".join(answer)
            getattr(answer, "close", lambda: None)()
        gc.collect()
        held = [found for found in gc.garbage if isinstance(found, dict) and "eventName" in found]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()

    assert statuses == ["200 OK"] * len(batches)
    assert event_count(engine, session_id) == len(events)
    assert held == []
