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


def test_the_end_of_the_minimum_time_is_said_with_the_way_to_the_finish_button(page, task_server):
    start_writing(page, task_server.url)
    assert "You may finish now" not in live_text(page)
    expect(page.get_by_test_id("finish")).to_be_enabled(timeout=(MIN_SECONDS + 5) * 1000)
    wait_said(page, "You may finish now: Esc, then Tab, leaves the text for the Finish button.")
