"""The minimum writing time ([session] min_seconds) holds on several hosts whose clocks disagree
(a VM that lost its NTP sync): the writing's start and the finish's check are timed by the
database's clock, which every host shares, not by the host that served each request."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest

from study.server import create_app
from tests.server.flow import post_init, start, to_writing

HOUR = 3600


@pytest.fixture
def app(backend_study, engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("a SQLite file is served by one host, with one clock")
    return create_app(dataclasses.replace(backend_study, min_seconds=600), engine=engine, suggestion_engine=object())


def _on_a_host(monkeypatch, offset: float):
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + offset)


def test_a_host_whose_clock_is_ahead_does_not_let_a_writer_finish_early(app, monkeypatch):
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)

    _on_a_host(monkeypatch, 2 * HOUR)  # the finish reaches a host two hours ahead
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    assert response.status_code == 409, response.get_json()
    assert "please keep writing for" in response.get_json()["error"]


def test_a_host_whose_clock_is_behind_shows_the_time_left_from_the_start(app, monkeypatch):
    client = app.test_client()
    _on_a_host(monkeypatch, 2 * HOUR)  # the writing starts on a host two hours ahead
    session_id = start(client)
    to_writing(client, session_id)
    monkeypatch.undo()

    # Served by a host on time, the page counts the ten minutes from the start, not minus two hours.
    page = client.get(f"/s/{session_id}/writing").get_data(as_text=True)
    elapsed = float(re.search(r'"elapsedSeconds":\s*([-0-9.e]+)', page).group(1))
    assert 0 <= elapsed < 60
