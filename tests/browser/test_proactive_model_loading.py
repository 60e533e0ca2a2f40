"""The proactive demo's first suggestion while the model loads (issue 25, item 2): the model
endpoint answers 503 with Retry-After, the task server passes that on as a failure that will
pass, and the editor says so and asks again, with backoff, without the writer typing again."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from study.cli import write_study_files
from study.lm.backends import BackgroundLoaded, DeterministicBackend
from study.lm.server import serve_in_thread
from study.store import events as event_store
from study.store import make_engine, reading
from tests.browser.conftest import MIN_SECONDS
from tests.browser.participant import start_writing, type_text, wait_saved

pytestmark = pytest.mark.browser


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        "min_seconds = 600": f"min_seconds = {MIN_SECONDS}",
        'mode = "completion"\n': 'mode = "completion"\nparadigm = "L1"\n',
    })  # fmt: skip
    return folder


@pytest.fixture
def loaded() -> threading.Event:
    return threading.Event()


@pytest.fixture
def endpoint(loaded):
    """`study demo`'s endpoint while its model loads: BackgroundLoaded, done when the test says."""

    def load() -> DeterministicBackend:
        loaded.wait(timeout=120)
        return DeterministicBackend()

    url, stop = serve_in_thread(BackgroundLoaded(load, "deterministic"))
    yield url
    loaded.set()
    stop()


def test_the_first_ghost_text_comes_once_the_model_has_loaded(page, task_server, loaded):
    session_id = start_writing(page, task_server.url)
    type_text(page, " The door opened")
    status = page.get_by_test_id("status-bar")
    # Idle 2 s, the request, the 503: the bar says what happens instead of nothing.
    expect(status).to_contain_text("the assistant is getting ready, trying again in 5 s", timeout=10_000)
    expect(page.get_by_test_id("suggestion-ghost")).to_be_hidden()
    loaded.set()  # the model is ready now; the writer does nothing
    ghost = page.get_by_test_id("suggestion-ghost")
    expect(ghost).to_be_visible(timeout=20_000)
    expect(ghost).not_to_be_empty()
    expect(status).to_contain_text("Suggestion: active")
    wait_saved(page)

    engine = make_engine(task_server.study.database_url)
    with reading(engine) as connection:
        records = event_store.records(connection, session_id)
    engine.dispose()
    asked = [(r["eventName"], r.get("proactive", {}).get("reason", "")) for r in records
             if r["eventName"].startswith("suggestion")]  # fmt: skip
    assert asked[0][0] == "suggestion-get"
    assert asked[1][0] == "suggestion-fail" and "asking again in 5 s" in asked[1][1]
    assert [name for name, _ in asked[-2:]] == ["suggestion-get", "suggestion-open"]
