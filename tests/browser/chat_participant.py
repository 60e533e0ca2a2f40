"""What a participant of the chat study does in the browser (CollabLLM App. E)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.participant import to_instructions

NOTE = "I want a warm and honest tone with short paragraphs and one vivid example."


def start_chat(page: Page, base_url: str, access_code: str = "chat-1", *, query: str | None = None) -> str:
    """From /task through consent, instructions, intent and pre-writing to the chat page;
    `query`: the task link's own (an MTurk worker's) instead of the access code."""
    to_instructions(page, base_url, access_code, query=query)
    page.get_by_test_id("confirm1").check()
    page.get_by_test_id("confirm2").check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/intent")
    page.get_by_test_id("intent-option").first.check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/prewriting")
    for box in page.locator("fieldset[data-question^=q] textarea").all()[:6]:
        box.fill(NOTE)
    page.get_by_test_id("next").click()
    page.wait_for_url("**/chat")
    document = page.get_by_test_id("document")
    if page.get_by_test_id("merge-note").count():  # [chat] document_pane = "merged": read-only
        expect(document).to_have_attribute("data-ready", "true")
        expect(document).not_to_be_editable()
    else:
        expect(document).to_be_editable()
    return page.url.rstrip("/").split("/")[-2]


def exchange(page: Page, text: str, count: int, timeout: float = 20_000) -> None:
    """Send one message and wait for the reply (the exchange counter reaching `count`)."""
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("chat-send").click()
    expect(page.get_by_test_id("exchange-count")).to_have_text(f"{count} of 8 exchanges", timeout=timeout)


def rate(page: Page, value: int) -> None:
    panel = page.locator(".rating-panel:not([hidden])")
    expect(panel).to_be_visible()
    panel.get_by_test_id("rating-submit").click()  # not moved yet: refused
    expect(panel.locator("[data-role=panel-error]")).to_contain_text("Move the slider")
    panel.locator("input[type=range]").fill(str(value))
    panel.get_by_test_id("rating-submit").click()
    expect(page.locator(".rating-panel:not([hidden])")).to_have_count(0)


def wait_saved(page: Page, timeout: float = 20_000) -> None:
    expect(page.get_by_test_id("save-state")).to_have_text("All changes saved", timeout=timeout)
