"""What a writer using a screen reader is told at L0's assistant panel (MindCopilot's
user-initiated paradigm): each response once, when it has come, through the page's single
#announce region; not their own request, not the earlier responses again as the list grows,
nothing after a reload; and a request that got no response (tests/browser/screen_reader.py reads
the live regions from Chromium's accessibility tree)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.participant import start_writing
from tests.browser.screen_reader import live_text, wait_said
from tests.browser.test_proactive_assistant import ask, panel_study

pytestmark = pytest.mark.browser


@pytest.fixture
def study_dir(tmp_path):
    return panel_study(tmp_path / "study", insert_button=True)


@pytest.fixture
def endpoint(model) -> str:
    return model.url


def test_each_response_is_said_once_and_the_list_is_not_read_again(page, task_server, model):
    # The list of responses was itself a live region: each request the writer sent was read
    # back to them, and every item added (the Insert at cursor button's label too) was read.
    start_writing(page, task_server.url)
    first = ask(page, "Write a sentence about the town at night.")
    said = wait_said(page, f"The assistant replied: {first}")
    assert "Write a sentence about the town at night." not in said, said

    second = ask(page, "And one about the harbour.")
    said = wait_said(page, f"The assistant replied: {second}")
    assert first != second  # the model answers each request its own way
    assert first not in said and "And one about the harbour." not in said, said
    assert "Insert at cursor" not in said, said

    # A request with no response is said, with where the request went.
    model.fail_next()
    page.get_by_test_id("chat-input").fill("One more, please.")
    page.keyboard.press("Enter")
    said = wait_said(page, "No answer this time")
    assert "Your request is back in the box." in said and second not in said, said
    expect(page.get_by_test_id("chat-input")).to_have_value("One more, please.")

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    page.wait_for_timeout(500)  # an announcement is made 50 ms after its call
    said = live_text(page)
    assert first not in said and second not in said and "No answer" not in said, said
