"""A worker's event batches give way to the requests a writer is waiting for (study.precedence):
while a suggestion's request does its own work a new batch waits, for at most a bound; while it
waits for the model, batches go at once; and every view that makes a model call is watched."""

from __future__ import annotations

import threading
from contextlib import nullcontext

import pytest

from study import precedence
from study.server import create_app, contract
from tests.server.flow import start, to_writing


def _in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _batch(order: list, at_most: float = 30.0) -> threading.Thread:
    return _in_thread(lambda: (precedence.give_way(at_most), order.append("batch started")))


def _suggestion(order: list, *, waiting_for_model: bool = False) -> tuple[threading.Thread, threading.Event]:
    """A watched request in a thread, held at its own work (or waiting for the model) until the
    event returned is set; it notes its answer in `order`."""
    reached, release = threading.Event(), threading.Event()

    @precedence.watched
    def suggestion():
        with precedence.waiting_for_model() if waiting_for_model else nullcontext():
            reached.set()
            release.wait(30)
        order.append("suggestion answered")

    thread = _in_thread(suggestion)
    reached.wait(30)
    return thread, release


def test_a_new_batch_waits_for_a_suggestion_at_work():
    order: list = []
    asked, done = _suggestion(order)
    batch = _batch(order)
    batch.join(0.3)  # time enough for a batch that did not wait to start
    done.set()
    asked.join(30)
    batch.join(30)
    assert order == ["suggestion answered", "batch started"]


def test_batches_go_while_the_suggestion_waits_for_the_model():
    order: list = []
    asked, answered = _suggestion(order, waiting_for_model=True)
    batch = _batch(order)
    batch.join(10)
    answered.set()
    asked.join(30)
    assert order == ["batch started", "suggestion answered"]


def test_a_batch_waits_no_longer_than_the_bound():
    order: list = []
    asked, done = _suggestion(order)
    batch = _batch(order, at_most=0.05)
    batch.join(10)
    assert order == ["batch started"]  # while the suggestion still works
    done.set()
    asked.join(30)


def test_a_failed_suggestion_leaves_no_claim_behind():
    @precedence.watched
    def suggestion():
        raise RuntimeError("the view failed")

    with pytest.raises(RuntimeError):
        suggestion()
    with precedence.waiting_for_model():  # outside a watched request: nothing to give up
        pass
    order: list = []
    _batch(order).join(10)
    assert order == ["batch started"]


def test_every_view_that_calls_a_model_is_watched(study):
    app = create_app(study)
    model_call_views = {
        endpoint: view
        for endpoint, view in app.view_functions.items()
        if 503 in getattr(contract.contract_of(view), "responses", {})  # busy: every slot taken
    }
    assert set(model_call_views) == {
        "suggestions_api.suggest", "proactive_api.suggest", "proactive_api.ask_assistant",
        "chat_api.send", "chat_arm_api.send",
    }  # fmt: skip
    assert [endpoint for endpoint, view in model_call_views.items() if not precedence.is_watched(view)] == []


def test_an_event_batch_starts_while_a_tab_suggestion_waits_for_the_model(study, endpoint_factory):
    from dataclasses import replace

    endpoint = endpoint_factory()
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=endpoint.url)))
    client = app.test_client()
    session_id = start(client, access_code="lab-1")
    to_writing(client, session_id)
    order: list = []
    endpoint.on_call = lambda: _batch(order).join(10)  # a batch arriving as the model is asked

    answer = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon a time"})
    assert answer.status_code == 200
    assert order == ["batch started"]
