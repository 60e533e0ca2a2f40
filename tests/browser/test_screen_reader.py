"""What a writer using a screen reader is told on the writing page. The focus stays in the text
while suggestions come and go, so what the page shows by other means (a list's highlight, a
ghost text drawn over the text, the timer reaching zero) must reach a live region
(tests/browser/screen_reader.py reads them from Chromium's accessibility tree)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Route, expect

from study import config
from study.cli import write_study_files
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import start_writing, type_text, wait_saved
from tests.browser.routed import Routed
from tests.browser.screen_reader import live_text, wait_said

pytestmark = pytest.mark.browser


def test_the_highlighted_suggestion_is_said_as_the_arrows_move_it(page, task_server):
    start_writing(page, task_server.url)
    type_text(page, " The night was cold.")
    page.keyboard.press("Tab")
    suggestions = page.get_by_test_id("suggestion")
    expect(suggestions.first).to_be_visible()
    shown = suggestions.all_inner_texts()
    wait_said(page, f"{shown[0]} (1 of {len(shown)})")
    page.keyboard.press("ArrowDown")
    wait_said(page, f"{shown[1]} (2 of {len(shown)})")
    page.keyboard.press("ArrowUp")
    wait_said(page, f"{shown[0]} (1 of {len(shown)})")
    # Shift+Tab shows the list again at the item last highlighted, and says it.
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+Tab")
    expect(suggestions.first).to_be_visible()
    wait_said(page, f"{shown[0]} (1 of {len(shown)})")


def test_a_list_of_one_suggestion_is_said_as_one(page, tmp_path, task_server_factory):
    # An arm with n = 1 (one suggestion per Tab): the page said "1 suggestions. Up and down
    # arrows to choose", on screen too, beneath the text.
    folder = tmp_path / "study"
    write_study_files(folder, replacements={**CONTACT, "n = 5\n": "n = 1\n"})
    server = task_server_factory(config.load(folder))
    start_writing(page, server.url)
    type_text(page, " The night was cold.")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion")).to_have_count(1)
    wait_said(page, "1 suggestion. Enter to accept, Esc to hide.")
    assert "suggestions. Up and down" not in live_text(page)


def test_the_end_of_the_minimum_time_is_said_with_the_way_to_the_finish_button(page, task_server):
    start_writing(page, task_server.url)
    assert "You may finish now" not in live_text(page)
    expect(page.get_by_test_id("finish")).to_be_enabled(timeout=(MIN_SECONDS + 5) * 1000)
    wait_said(page, "You may finish now: Esc, then Tab, leaves the text for the Finish button.")


def unavailable(error: str) -> Callable[[Route], None]:
    """An answer to a routed request: 503, saying `error`, as a server restarting or a busy
    model does."""
    return lambda route: route.fulfill(status=503, content_type="application/json", body=json.dumps({"error": error}))


@pytest.fixture
def long_writing(tmp_path, task_server_factory):
    """A study whose minimum time (600 s) does not end during the test: on a slow machine the
    shared server's few seconds ran out mid-test, and "You may finish now" took the live region
    before the test read it."""
    folder = tmp_path / "study"
    write_study_files(folder, replacements={**CONTACT})
    return task_server_factory(config.load(folder))


def test_saved_again_after_a_failure_is_said_but_not_every_pause_in_the_typing(page, long_writing):
    # The footer goes "Saving…", "All changes saved" at every pause: read aloud, it would talk
    # over the writer. A screen reader is told when the text stops being saved, and when it is
    # saved again, so the writer knows it is safe to finish.
    events = Routed(page, "**/events")
    start_writing(page, long_writing.url)
    type_text(page, " The night was cold.")
    wait_saved(page)
    page.wait_for_timeout(300)  # an announcement is made 50 ms after its call
    said = live_text(page)
    assert "Saving" not in said and "All changes saved" not in said, said
    events.answer = unavailable("the server is restarting")
    type_text(page, " The wind rose.")
    wait_said(page, "Reconnecting… your text is kept in this browser")
    events.answer = None
    wait_saved(page)
    wait_said(page, "All changes saved")


def test_a_failure_to_save_is_said_when_the_status_line_holds_another_message(page, long_writing):
    Routed(page, "**/suggestions").answer = unavailable("the model is busy")
    events = Routed(page, "**/events")
    start_writing(page, long_writing.url)
    type_text(page, " The night was cold.")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("status")).to_contain_text("Could not get suggestions")
    events.answer = unavailable("the server is restarting")
    type_text(page, " The wind rose.")
    expect(page.get_by_test_id("save-state")).to_have_text("Reconnecting… your text is kept in this browser")
    wait_said(page, "Reconnecting… your text is kept in this browser")
    events.answer = None
    wait_said(page, "All changes saved")


def proactive_study(folder: Path) -> Path:
    """Every writer gets L1: ghost text after a pause (MindCopilot). Its minimum time (600 s)
    does not end during the test, for the reason `long_writing`'s does not: on a loaded machine
    the ghost text came as the few seconds ran out, and "You may finish now" took the live region
    before the test read it."""
    write_study_files(folder, replacements={
        **CONTACT, 'mode = "completion"\n': 'mode = "completion"\nparadigm = "L1"\n',
    })  # fmt: skip
    return folder


def test_a_ghost_text_suggestion_is_said_with_its_keys(page, tmp_path, task_server_factory):
    # The ghost layer is aria-hidden (it repeats the writer's text in transparent ink), so a
    # screen reader user never learnt that a suggestion was there, nor what it said.
    server = task_server_factory(config.load(proactive_study(tmp_path / "study")))
    start_writing(page, server.url)
    type_text(page, " The door opened")
    ghost = page.get_by_test_id("suggestion-ghost")
    expect(ghost).to_be_visible(timeout=8000)
    expect(ghost).not_to_be_empty()
    wait_said(page, f"Suggestion (Tab accepts, Esc or typing rejects): {ghost.text_content().strip()}")
