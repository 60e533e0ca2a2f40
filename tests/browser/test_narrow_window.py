"""The writing page on a narrow window: a phone held upright (320 CSS pixels, WCAG 1.4.10's
reflow width) or a laptop at 200% zoom. A crowd worker takes the HIT on whatever they have;
the text, the assistant's box and the Finish button must stay usable without scrolling sideways."""

from __future__ import annotations

import pytest

from study import config
from tests.browser.test_chat_arm import chat_arm_study
from tests.browser.participant import start_writing

pytestmark = pytest.mark.browser

PHONE = {"width": 320, "height": 640}


def boxes(page, *test_ids: str) -> dict[str, dict]:
    return {test_id: page.get_by_test_id(test_id).bounding_box() for test_id in test_ids}


def test_a_chat_arm_writer_on_a_phone_has_the_whole_width_to_write_in(browser, tmp_path, task_server_factory):
    # The panel had a fixed 22rem beside the editor: at 320 px the text was a letter wide.
    server = task_server_factory(config.load(chat_arm_study(tmp_path / "study")))
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        start_writing(page, server.url)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        placed = boxes(page, "editor", "chat-panel", "chat-input", "chat-send", "finish")
        assert placed["editor"]["width"] >= 0.8 * PHONE["width"], placed["editor"]
        for test_id, box in placed.items():
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (test_id, box)
        # The panel comes after the text, not over it.
        assert placed["chat-panel"]["y"] >= placed["editor"]["y"] + placed["editor"]["height"]
        page.get_by_test_id("chat-input").fill("Give me an opening line.")
        page.get_by_test_id("chat-send").click()
        page.locator('#chat-messages li[data-role="assistant"]').first.wait_for()
    finally:
        context.close()
