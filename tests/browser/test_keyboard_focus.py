"""Where the keyboard's focus goes after an action on the chat pages. Sending disables the
message box and Send; a focus dropped to the top of the page leaves a keyboard or screen-reader
user to find their way back at every message."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from tests.browser.chat_participant import start_chat
from tests.browser.participant import start_writing, to_instructions
from tests.browser.test_narrow_window import chat_arm_study
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser


def focused(page) -> str:
    return page.evaluate("() => document.activeElement.dataset.testid || document.activeElement.tagName")


def tab_to(page, test_id: str, presses: int = 30) -> None:
    """Tab until the focus is on `test_id`; fails naming where the Tabs went when it is not
    reached within `presses` (a control the keyboard cannot reach would Tab round the page for ever)."""
    went = []
    for _ in range(presses):
        went.append(focused(page))
        if went[-1] == test_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {test_id!r}; the focus went {' -> '.join(went)}")


def send_by_keyboard(page, text: str) -> None:
    """Type in the message box, Tab to Send, Enter."""
    expect(page.get_by_test_id("chat-input")).to_be_focused()
    page.keyboard.type(text)
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("chat-send")).to_be_focused()
    page.keyboard.press("Enter")


def test_a_chat_participant_on_the_keyboard_goes_from_message_to_rating_to_message(page, tmp_path, task_server_factory):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements={**CONTACT, 'document_pane = "merged"': 'document_pane = "edited"'})
    server = task_server_factory(config.load(folder))
    start_chat(page, server.url)
    page.get_by_test_id("chat-input").focus()
    for n in (1, 2):
        send_by_keyboard(page, f"Here is my thought number {n}.")
        expect(page.get_by_test_id("exchange-count")).to_have_text(f"{n} of 8 exchanges", timeout=20_000)
        # Back in the message box: the next message is typed at once.
        expect(page.get_by_test_id("chat-input")).to_be_focused()

    # The third reply owes a rating, which blocks the message box: the focus goes to it.
    send_by_keyboard(page, "Here is my thought number 3.")
    panel = page.locator(".rating-panel:not([hidden])")
    expect(panel).to_be_visible(timeout=20_000)
    slider = panel.locator("input[type=range]")
    expect(slider).to_be_focused()
    expect(slider).to_have_accessible_description("not rated yet")
    # Submitted unmoved: refused, and the focus goes back to the slider, not left on the button.
    tab_to(page, "rating-submit")
    page.keyboard.press("Enter")
    expect(panel.locator("[data-role=panel-error]")).to_have_text("Move the slider to give a rating.")
    expect(slider).to_be_focused()
    page.keyboard.press("ArrowRight")  # moved: now it is an answer
    tab_to(page, "rating-submit")
    page.keyboard.press("Enter")
    expect(panel).to_have_count(0)
    expect(page.get_by_test_id("chat-input")).to_be_focused()
    send_by_keyboard(page, "Here is my thought number 4.")
    expect(page.get_by_test_id("exchange-count")).to_have_text("4 of 8 exchanges", timeout=20_000)


def test_a_chat_arm_writer_who_sends_by_keyboard_stays_in_the_message_box(page, tmp_path, task_server_factory):
    server = task_server_factory(config.load(chat_arm_study(tmp_path / "study")))
    start_writing(page, server.url)
    page.get_by_test_id("chat-input").focus()
    send_by_keyboard(page, "Give me an opening line.")
    expect(page.locator('#chat-messages li[data-role="assistant"]')).to_have_count(1, timeout=20_000)
    expect(page.get_by_test_id("chat-input")).to_be_focused()
    send_by_keyboard(page, "And a second one.")
    expect(page.locator('#chat-messages li[data-role="assistant"]')).to_have_count(2, timeout=20_000)


def test_removing_a_pre_writing_question_by_keyboard_goes_on_to_the_next_question(page, tmp_path, task_server_factory):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    server = task_server_factory(config.load(folder))
    to_instructions(page, server.url, "chat-1")
    page.get_by_test_id("confirm1").check()
    page.get_by_test_id("confirm2").check()
    page.get_by_test_id("next").click()
    # Continue with no intent chosen: the page comes back with the focus on the first intent,
    # the error its description (it was at the top of the page, the error apart from the list).
    page.get_by_test_id("next").click()
    first_intent = page.get_by_test_id("intent-option").first
    expect(first_intent).to_be_focused()
    expect(first_intent).to_have_accessible_description("Please choose one of the intents.")
    page.keyboard.press("Space")
    expect(first_intent).to_be_checked()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/prewriting")
    first, second = page.locator("fieldset[data-question=q1]"), page.locator("fieldset[data-question=q2]")
    question = first.locator("legend").inner_text().replace("(required)", "").strip()
    # The page says its step in its title, and each answer box is named by its question.
    expect(page).to_have_title(f"Step 2: pre-writing preparation · {server.study.title}")
    expect(page.get_by_role("textbox", name=question, exact=True)).to_have_count(1)
    # Each row's button says "Remove"; a screen reader hears which question it removes.
    remove = page.get_by_role("button", name=f"Remove the question: {question}", exact=True)
    expect(remove).to_have_count(1)
    first.locator("textarea").focus()
    page.keyboard.type("Not this one.")
    page.keyboard.press("Tab")
    expect(remove).to_be_focused()
    page.keyboard.press("Enter")
    expect(first).to_be_hidden()
    expect(second.locator("textarea")).to_be_focused()  # not the top of the page
    page.keyboard.type("Typed straight on.")
    expect(second.locator("textarea")).to_have_value("Typed straight on.")
