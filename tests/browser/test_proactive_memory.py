"""L2's interaction history survives a reload (README, Proactive co-writing, "The memory").

The history an L2 request carries (accepted, rejected, deleted and added spans) lives in the
page. A reload restores it from this browser's saved copy; a browser without it (localStorage
cleared) gets the server's rebuild from the stored events (study.paradigms.proactive.memory).
Either way the first request after the reload carries what the last one before it carried.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from study.paradigms.proactive.memory import interaction_memory
from tests.browser.participant import start_writing, type_text, wait_saved
from tests.browser.test_proactive import (  # noqa: F401
    logged,
    paradigm,
    proactive_toml,
    study_dir,
    wait_for_ghost,
)

pytestmark = pytest.mark.browser


def proactive_bodies(page) -> list[dict]:
    bodies: list[dict] = []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data)) if r.url.endswith("/proactive") else None)
    return bodies


@pytest.mark.parametrize("paradigm", ["L2"])
@pytest.mark.parametrize("storage", ["saved copy", "lost"])
def test_after_a_reload_the_next_l2_request_carries_the_same_history(page, task_server, paradigm, storage):  # noqa: F811
    bodies = proactive_bodies(page)
    session_id = start_writing(page, task_server.url)
    type_text(page, " A cold wind")
    wait_for_ghost(page)
    page.keyboard.press("Escape")
    type_text(page, " blew")
    wait_for_ghost(page)
    page.keyboard.press("Tab")
    type_text(page, " Later")
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    wait_for_ghost(page)  # the third request: its history has a reject, an accept, an add, a del
    before = bodies[-1]
    kinds = {item["kind"] for item in before["history"]}
    assert kinds == {"reject", "accept", "add", "del"}, before["history"]
    assert before["outcomes"] == ["rejected", "accepted"]
    wait_saved(page)

    if storage == "lost":
        page.evaluate("() => localStorage.clear()")
        page.evaluate("() => { window.localStorage.setItem = () => {}; }")  # nothing saved on the way out
    page.reload()
    wait_for_ghost(page)
    after = bodies[-1]
    assert after is not before
    assert after["doc"] == before["doc"]
    assert after["history"] == before["history"]
    assert after["outcomes"] == before["outcomes"]
    assert after["kept_words"] == before["kept_words"]

    # The server's rebuild is what the page held (the pure function on the stored events).
    events = logged(task_server, session_id)
    upto = max(i for i, e in enumerate(events) if e["eventName"] == "suggestion-get")
    rebuilt = interaction_memory(events[:upto])
    assert rebuilt["history"] == before["history"]
    capture = os.environ.get("STUDY_CAPTURE_L2_SESSION")
    if capture and storage == "lost":  # how tests/suggest/data/l2-session.json was made
        Path(capture).write_text(json.dumps({"events": events[:upto], "request": before}, indent=1))
