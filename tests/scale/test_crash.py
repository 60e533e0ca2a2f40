"""A server killed with SIGKILL in the middle of a writer's event stream loses nothing it
acknowledged: after a restart on the same SQLite database, and the browser's resend of whatever
was unacknowledged, every event is stored exactly once with seqs 0..n-1."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing

import httpx
import pytest

from study.curation.replay import replay

from .browser import Browser, start_writing

pytestmark = pytest.mark.slow

TEXT = "It was a bright cold day in April, and the clocks were striking thirteen. "


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def stored(database) -> list[tuple[int, int]]:
    """(seq, copies) of every stored event, read straight from the file."""
    with closing(sqlite3.connect(database)) as connection:
        return connection.execute(
            "SELECT seq, count(*) FROM events GROUP BY seq ORDER BY seq"
        ).fetchall()


def test_a_killed_server_keeps_every_acknowledged_event(study_server, study_folder):
    client = httpx.Client(base_url=study_server.url, timeout=10)
    session_id = start_writing(client, "crash-1")
    browser = Browser(client, session_id)
    stop = threading.Event()
    crashed = []

    def write():
        # Keeps typing during the outage, as a writer would; sends as fast as answers come.
        try:
            characters = iter(TEXT * 1000)
            while not stop.is_set():
                browser.type("".join(next(characters) for _ in range(3)))
                if not browser.send():
                    time.sleep(0.05)  # the outbox's back-off, shortened
            while browser.pending:
                assert browser.send(), "the restarted server cannot be reached"
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            crashed.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        wait_for(lambda: len(browser.progress()[0]) >= 150, 30, "the first acknowledgements")
        study_server.kill()
        wait_for(lambda: browser.progress()[1] > 0, 10, "the writer to notice the dead server")

        # Nothing acknowledged before the kill may be missing; recovery reads the WAL.
        acked_before, _ = browser.progress()
        rows = stored(study_folder / "study.db")
        assert acked_before <= {seq for seq, _ in rows}
        assert all(copies == 1 for _, copies in rows)

        study_server.start()
        wait_for(lambda: len(browser.progress()[0]) >= len(acked_before) + 150, 30,
                 "acknowledgements from the restarted server")
    finally:
        stop.set()
        writer.join(timeout=60)
    assert not crashed, crashed
    assert not writer.is_alive()

    acked, failures = browser.progress()
    rows = stored(study_folder / "study.db")
    assert failures > 0, "the kill did not interrupt the stream"
    assert acked == set(range(browser.seq)), "every event the browser made was acknowledged"
    assert [seq for seq, _ in rows] == list(range(browser.seq)), "seqs are contiguous"
    assert all(copies == 1 for _, copies in rows), "every event is stored exactly once"

    state = client.get(f"/api/sessions/{session_id}/state").json()
    assert state["doc"] == browser.doc
    assert state["next_seq"] == browser.seq
    with closing(sqlite3.connect(study_folder / "study.db")) as connection:
        records = [r for (r,) in connection.execute(
            "SELECT record FROM events WHERE session_id = ? ORDER BY seq", (session_id,))]
    assert replay([json.loads(r) for r in records]).text == browser.doc
