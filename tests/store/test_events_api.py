"""study.server.events_api against a real database: good batches are acknowledged, and every bad
request gets a JSON answer that says what is wrong while nothing at all is written."""

from __future__ import annotations

import orjson
import pytest

from study.server import MAX_REQUEST_BYTES, create_app
from study.store import writing
from study.store import sessions as session_store

from .records import Editor, event_count


@pytest.fixture
def app(backend_study, engine):
    # Suggestions are never requested here, so any object can stand in for the engine.
    return create_app(backend_study, engine=engine, suggestion_engine=object())


@pytest.fixture
def client(app):
    return app.test_client()


def session_at(engine, study, stage: str) -> str:
    prompt = study.prompts[0]
    with writing(engine) as connection:
        session_id = session_store.create(connection, access_code="lab-1")["session_id"]
        session_store.update_session(
            connection, session_id, stage=stage, prompt_code=prompt.code,
            condition=study.conditions_for(prompt.genre)[0].name,
        )
    return session_id


@pytest.fixture
def session_id(engine, backend_study) -> str:
    return session_at(engine, backend_study, "writing")


def events_url(session_id: str) -> str:
    return f"/api/sessions/{session_id}/events"


def batch_of(*records) -> dict:
    return {"events": list(records)}


def typed(text: str) -> list[dict]:
    editor = Editor()
    return [editor.initialize(), *editor.type(text)]


def post(client, session_id, body):
    return client.post(events_url(session_id), json=body)


# -- good batches -----------------------------------------------------------------------------


def test_a_batch_is_acknowledged_seq_by_seq(client, engine, session_id):
    response = post(client, session_id, batch_of(*typed("Hi")))

    assert response.status_code == 200
    assert response.get_json()["acked"] == [0, 1, 2]
    assert event_count(engine, session_id) == 3


def test_a_resent_batch_is_acknowledged_again_and_stored_once(client, engine, session_id):
    body = batch_of(*typed("Hi"))
    first = post(client, session_id, body)

    again = post(client, session_id, body)

    assert again.status_code == 200
    assert again.get_json()["acked"] == first.get_json()["acked"] == [0, 1, 2]
    assert event_count(engine, session_id) == 3


def test_the_state_is_the_document_replayed_from_stored_events(client, session_id):
    editor = Editor()
    records = [editor.initialize(), *editor.type("The end.")]
    # Events that arrive before the start of the session cannot be replayed yet: refused, and
    # the browser, which keeps them until acknowledged, sends them again after the others.
    early = post(client, session_id, batch_of(*records[5:]))
    assert early.status_code == 422 and "system-initialize" in early.get_json()["error"]
    post(client, session_id, batch_of(*records[:5]))
    assert post(client, session_id, batch_of(*records[5:])).status_code == 200

    state = client.get(f"/api/sessions/{session_id}/state").get_json()

    assert state == {
        "doc": editor.doc, "next_seq": len(records), "stored": len(records),
        "suggestion_index": 0, "hover_index": "", "last_suggestions": [],
    }  # fmt: skip


# -- bad requests: an answer that names the problem, and nothing written ------------------------


@pytest.fixture
def stored_events(client, session_id):
    """Three events already stored, so that 'nothing written' is checked against a non-empty table."""
    assert post(client, session_id, batch_of(*typed("ab"))).status_code == 200


@pytest.fixture
def nothing_written(engine, stored_events):
    """Asserts, after the test, that the events table did not change."""
    before = event_count(engine)
    yield
    assert event_count(engine) == before, "a refused request wrote events"


@pytest.mark.usefixtures("nothing_written")
class TestRefusedRequests:
    def test_malformed_json_is_a_400(self, client, session_id):
        response = client.post(
            events_url(session_id), data=b'{"events": [', content_type="application/json"
        )

        assert response.status_code == 400
        assert response.get_json()["error"].startswith("body is not valid JSON")

    def test_an_unknown_session_is_a_404_in_json(self, client):
        unknown = "f" * 32

        response = post(client, unknown, batch_of(*typed("a")))

        assert response.status_code == 404
        assert response.is_json
        assert unknown in response.get_json()["error"]

    def test_a_session_id_of_the_wrong_shape_is_a_404_in_json(self, client):
        response = post(client, "../../etc", batch_of(*typed("a")))

        assert response.status_code == 404
        assert response.is_json

    def test_an_oversized_body_is_a_413_that_names_the_limit(self, client, session_id):
        record = typed("a")[1]
        record["currentDoc"] = "x" * (MAX_REQUEST_BYTES + 1)

        response = post(client, session_id, batch_of(record))

        assert response.status_code == 413
        assert response.is_json
        assert str(MAX_REQUEST_BYTES) in response.get_json()["error"]

    def test_a_wrongly_typed_field_is_a_422_naming_the_field(self, client, session_id):
        record = typed("abc")[3]
        record["textDelta"]["ops"][0]["retain"] = "3"

        response = post(client, session_id, batch_of(record))

        assert response.status_code == 422
        assert response.get_json()["error"].startswith("events[0].textDelta.ops[0].retain:")

    @pytest.mark.parametrize(
        "field, value, named",
        [
            ("seq", -1, "events[0].seq"),
            ("seq", "4", "events[0].seq"),
            ("eventName", "text-paste", "events[0].eventName"),
            ("eventTimestamp", 1.5, "events[0].eventTimestamp"),
            ("currentSuggestions", "none", "events[0].currentSuggestions"),
            ("currentN", 5, "events[0].currentN"),
        ],
    )
    def test_each_wrong_type_is_named(self, client, session_id, field, value, named):
        record = {**typed("a")[1], field: value}

        response = post(client, session_id, batch_of(record))

        assert response.status_code == 422
        assert response.get_json()["error"].startswith(f"{named}:")

    def test_whole_numbers_written_with_a_decimal_point_are_refused(self, client, engine, session_id):
        # JSON Schema accepts 3.0 as an integer; stored, it would be exported as 3.0.
        record = typed("abc")[3]
        record["textDelta"]["ops"][0]["retain"] = float(record["textDelta"]["ops"][0]["retain"])
        before = event_count(engine, session_id)

        response = post(client, session_id, batch_of(record))

        assert response.status_code == 422
        assert "3, not 3.0" in response.get_json()["error"]
        assert event_count(engine, session_id) == before

    def test_a_missing_field_is_named(self, client, session_id):
        record = typed("a")[1]
        del record["eventTimestamp"]

        response = post(client, session_id, batch_of(record))

        assert response.status_code == 422
        assert "eventTimestamp" in response.get_json()["error"]

    def test_one_bad_event_refuses_the_whole_batch(self, client, session_id):
        records = typed("abcdef")
        records[4]["cursorRange"] = {"index": -1, "length": 0}

        response = post(client, session_id, batch_of(*records[3:]))

        assert response.status_code == 422
        assert response.get_json()["error"].startswith("events[1].cursorRange")

    def test_too_many_events_in_one_batch_is_a_422(self, client, session_id):
        editor = Editor()
        records = [editor.initialize(), *editor.type("x" * 500)]  # 501 events

        response = post(client, session_id, batch_of(*records))

        assert response.status_code == 422
        assert response.get_json()["error"].startswith("events:")

    @pytest.mark.parametrize("body", [[], {}, {"events": []}, {"events": [], "extra": 1}])
    def test_a_body_of_the_wrong_shape_is_a_422(self, client, session_id, body):
        response = post(client, session_id, body)

        assert response.status_code == 422
        assert response.get_json()["error"]

    def test_new_events_after_the_writer_finished_are_a_409(self, client, engine, backend_study):
        finished = session_at(engine, backend_study, "evaluation")

        response = post(client, finished, batch_of(*typed("a")))

        assert response.status_code == 409
        assert "evaluation" in response.get_json()["error"]


def test_resends_after_the_writer_finished_are_still_acknowledged(client, engine, session_id):
    body = batch_of(*typed("ab"))
    post(client, session_id, body)
    with writing(engine) as connection:
        session_store.update_session(connection, session_id, stage="evaluation")

    resend = post(client, session_id, body)
    extended = post(client, session_id, batch_of(*typed("abc")))

    assert resend.status_code == 200
    assert resend.get_json()["acked"] == [0, 1, 2]
    assert extended.status_code == 409, "a batch with one new event is refused whole"
    assert event_count(engine, session_id) == 3


def test_a_batch_of_the_maximum_size_is_accepted(client, engine, session_id):
    editor = Editor()
    records = [editor.initialize(), *editor.type("y" * 499)]

    response = client.post(
        events_url(session_id), data=orjson.dumps(batch_of(*records)), content_type="application/json"
    )

    assert response.status_code == 200
    assert event_count(engine, session_id) == 500


def test_a_writer_whose_text_holds_a_nul_character_can_finish_on_either_database(client, engine, session_id):
    # A NUL pasted into the editor is stored with its events (escaped in their JSON) on both
    # databases; PostgreSQL's text cannot hold the finish button's copy of it as it is.
    import time

    with writing(engine) as connection:
        session_store.update_session(connection, session_id, writing_started_at=time.time() - 3600)
    editor = Editor()
    assert post(client, session_id, batch_of(editor.initialize(), *editor.type("a\x00b"))).status_code == 200

    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 3, "pending": 0, "text": editor.doc})

    assert response.status_code == 200, response.data[:300]
    assert response.get_json()["next"].endswith("/evaluation")
    with writing(engine) as connection:
        assert session_store.get(connection, session_id)["final_text"] == editor.doc.replace("\x00", "")
