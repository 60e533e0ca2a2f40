"""What a writer using a screen reader is told on the writing page. The focus stays in the text
while suggestions come and go, so what the page shows by other means (a list's highlight, a
ghost text drawn over the text, the timer reaching zero) must reach a live region
(tests/browser/screen_reader.py reads them from Chromium's accessibility tree)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import MIN_SECONDS
from tests.browser.participant import start_writing, type_text
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


def test_the_end_of_the_minimum_time_is_said_with_the_way_to_the_finish_button(page, task_server):
    start_writing(page, task_server.url)
    assert "You may finish now" not in live_text(page)
    expect(page.get_by_test_id("finish")).to_be_enabled(timeout=(MIN_SECONDS + 5) * 1000)
    wait_said(page, "You may finish now: Esc, then Tab, leaves the text for the Finish button.")
