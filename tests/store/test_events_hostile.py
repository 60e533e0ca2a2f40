"""The event API against hostile batches (issue 10): each is refused with a 4xx that names the
problem, nothing of it is stored, and the server goes on answering."""

from __future__ import annotations

import dataclasses

import pytest

from study.server import create_app
from study.store import sessions as session_store
from study.store import writing

from .records import Editor, event_count
from .test_events_api import batch_of, post, session_at


@pytest.fixture
def app(backend_study, engine):
    return create_app(backend_study, engine=engine, suggestion_engine=object())


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def session_id(engine, backend_study) -> str:
    return session_at(engine, backend_study, "writing")


@pytest.fixture
def editor(client, session_id) -> Editor:
    """A session that has stored its start and "Hi"."""
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("Hi"))).status_code == 200
    return editor


def test_a_delta_that_cannot_replay_is_refused_on_arrival_naming_the_event(client, engine, session_id, editor):
    poisoned = editor.type("!")[0]
    poisoned["textDelta"] = {"ops": [{"retain": 5_000}, {"insert": "!"}]}
    before = event_count(engine, session_id)

    response = post(client, session_id, batch_of(poisoned))

    assert response.status_code == 422
    error = response.get_json()["error"]
    assert f"event seq {poisoned['seq']}" in error and "retain" in error and "runs past the end" in error
    assert event_count(engine, session_id) == before


def test_a_bad_delta_is_refused_even_when_it_follows_a_good_one_in_the_same_batch(client, engine, session_id, editor):
    good, bad = editor.type("ab")
    bad["textDelta"] = {"ops": [{"retain": 2}, {"delete": 500}]}

    response = post(client, session_id, batch_of(good, bad))

    assert response.status_code == 422 and f"event seq {bad['seq']}" in response.get_json()["error"]
    assert event_count(engine, session_id) == 3, "nothing of a refused batch is stored"
    assert post(client, session_id, batch_of(good)).status_code == 200


def test_good_batches_keep_being_accepted_after_a_refused_one(client, engine, session_id, editor):
    bad = {**editor.type("x")[0], "textDelta": {"ops": [{"delete": 99}]}}
    assert post(client, session_id, batch_of(bad)).status_code == 422
    editor.seq -= 1  # the refused event's number is taken again, as the browser would not
    editor.doc = editor.doc.replace("x", "", 1)
    editor.cursor -= 1

    assert post(client, session_id, batch_of(*editor.type(" there"))).status_code == 200

    state = client.get(f"/api/sessions/{session_id}/state").get_json()
    assert state["doc"] == editor.doc


def test_a_first_batch_that_cannot_replay_is_refused_and_the_session_starts_clean(client, engine, session_id):
    editor = Editor()
    start, typed_a = editor.initialize(), editor.type("a")[0]
    bad = {**typed_a, "textDelta": {"ops": [{"retain": 9_999}, {"insert": "a"}]}}

    response = post(client, session_id, batch_of(start, bad))

    assert response.status_code == 422 and f"event seq {bad['seq']}" in response.get_json()["error"]
    assert event_count(engine, session_id) == 0
    assert post(client, session_id, batch_of(start, typed_a)).status_code == 200
    assert client.get(f"/api/sessions/{session_id}/state").get_json()["doc"] == editor.doc


def test_a_first_batch_must_begin_with_the_initialize_event(client, engine, session_id):
    editor = Editor()
    editor.initialize()
    keystroke = editor.type("a")[0]
    keystroke["seq"] = 0

    response = post(client, session_id, batch_of(keystroke))

    assert response.status_code == 422 and "must be system-initialize" in response.get_json()["error"]
    assert event_count(engine, session_id) == 0


def test_a_first_batch_sent_again_to_another_worker_is_acknowledged_and_stored_once(client, engine, session_id):
    from study.server import arrival

    editor = Editor()
    first = batch_of(editor.initialize(), *editor.type("Hi"))
    assert post(client, session_id, first).status_code == 200
    arrival._checked.clear()  # the resend reaches a worker process that never saw this session

    again = post(client, session_id, first)

    assert again.status_code == 200 and again.get_json()["acked"] == [0, 1, 2]
    assert event_count(engine, session_id) == 3
    assert post(client, session_id, batch_of(*editor.type("!"))).status_code == 200
    assert client.get(f"/api/sessions/{session_id}/state").get_json()["doc"] == editor.doc


@pytest.fixture
def small_quota_app(backend_study, engine, study_folder):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace("[session]\n", "[session]\nmax_events = 100\nmax_bytes = 100000\n"))
    from study import config

    limited = dataclasses.replace(config.load(study_folder), database_url=backend_study.database_url)
    return create_app(limited, engine=engine, suggestion_engine=object())


def test_a_session_stores_at_most_its_quota_of_events(small_quota_app, engine):
    client = small_quota_app.test_client()
    session_id = session_at(engine, small_quota_app.extensions["study"], "writing")
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("a" * 99))).status_code == 200

    response = post(client, session_id, batch_of(*editor.type("b")))

    assert response.status_code == 422
    assert "at most 100" in response.get_json()["error"]
    assert event_count(engine, session_id) == 100


def test_a_session_stores_at_most_its_quota_of_bytes(small_quota_app, engine):
    client = small_quota_app.test_client()
    session_id = session_at(engine, small_quota_app.extensions["study"], "writing")
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize())).status_code == 200
    big = editor.type("a")[0]
    big["textDelta"]["ops"][-1]["insert"] = "a" * 60_000
    assert post(client, session_id, batch_of(big)).status_code == 200
    bigger = {**big, "seq": big["seq"] + 1, "textDelta": {"ops": [{"insert": "b" * 60_000}]}}

    response = post(client, session_id, batch_of(bigger))

    assert response.status_code == 422
    assert "100000" in response.get_json()["error"]
    assert event_count(engine, session_id) == 2


@pytest.mark.parametrize(
    "change, named",
    [
        (lambda r: r.update(currentDoc="x" * 100_001), "currentDoc"),
        (lambda r: r["textDelta"]["ops"][-1].update(insert="x" * 100_001), "insert"),
        (lambda r: r.update(eventTimestamp=2**63), "eventTimestamp"),
        (lambda r: r.update(eventTimestamp=2**64 - 1), "eventTimestamp"),
    ],
)
def test_oversized_text_and_numbers_are_422_naming_the_field(client, engine, session_id, editor, change, named):
    record = editor.type("c")[0]
    change(record)

    response = post(client, session_id, batch_of(record))

    assert response.status_code == 422, response.get_data(as_text=True)
    assert named in response.get_json()["error"]
    assert event_count(engine, session_id) == 3


def test_deeply_nested_attributes_are_a_422_not_a_500(client, engine, session_id, editor):
    record = editor.type("c")[0]
    nested: dict = {}
    for _ in range(250):
        nested = {"x": nested}
    record["textDelta"]["ops"][-1]["attributes"] = {"bold": nested}

    response = post(client, session_id, batch_of(record))

    assert response.status_code == 422
    assert "attributes.bold" in response.get_json()["error"]


def test_quill_formats_on_pasted_text_are_still_accepted(client, session_id, editor):
    record = editor.type("c")[0]
    record["textDelta"]["ops"][-1]["attributes"] = {"bold": True, "link": "https://example.org"}

    assert post(client, session_id, batch_of(record)).status_code == 200


def test_the_state_of_a_finished_session_is_not_served(client, engine, session_id, editor):
    assert client.get(f"/api/sessions/{session_id}/state").status_code == 200
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, stage="evaluation")

    response = client.get(f"/api/sessions/{session_id}/state")

    assert response.status_code == 409
    assert "Once upon" not in response.get_data(as_text=True)
