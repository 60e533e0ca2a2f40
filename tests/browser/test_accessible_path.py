"""The participant's path as a screen reader or a keyboard alone meets it (WCAG 2.1 AA): each page
says in its title which step it is, every field is named, the way out of the text is shown before
it is needed, and a survey sent back with answers missing puts the focus on the first of them
with its error as the field's description. tests/browser/test_screen_reader.py has what the
writing page says as suggestions come and go."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.participant import finish_writing, type_text, wait_saved

pytestmark = pytest.mark.browser

NEEDED = "This question needs an answer."


def test_a_screen_reader_user_knows_each_step_and_each_field_from_consent_to_the_survey(page, task_server):
    title = task_server.study.title
    page.goto(f"{task_server.url}/task?access_code=lab-1")
    # Every page was titled with the study's name alone: a screen reader says the title first,
    # and a writer switching back to the tab could not tell which step it held.
    expect(page).to_have_title(f"Consent form · {title}")
    page.get_by_role("checkbox", name="I agree to participate in this research. (required)").check()
    page.get_by_role("button", name="Continue").click()
    expect(page).to_have_title(f"Instructions · {title}")
    page.get_by_role("button", name="Continue").click()

    expect(page).to_have_title(f"Choose a prompt · {title}")
    # Each card's button reads "Write about this": its description is the prompt it takes.
    choices = page.get_by_role("button", name="Write about this")
    first_prompt = page.locator(".prompt-text").first.inner_text()
    expect(choices.first).to_have_accessible_description(first_prompt)
    choices.first.press("Enter")

    page.wait_for_url("**/writing")
    expect(page).to_have_title(f"Write your story · {title}")
    editor = page.get_by_role("textbox", name="Your story")
    expect(editor).to_be_editable()
    # Tab asks for suggestions in the text: the way out is on screen before the writer needs
    # it (it was said only after an Esc, which nothing told a sighted keyboard user to press).
    way_out = "Esc, then Tab, leaves the text for the Finish button."
    expect(page.get_by_test_id("leave-keys")).to_be_visible()
    expect(page.get_by_test_id("leave-keys")).to_have_text(way_out)
    expect(editor).to_have_accessible_description(f"{page.locator('#keys').inner_text()} {way_out}")
    type_text(page, " The end.")
    wait_saved(page)
    finish_writing(page)

    expect(page).to_have_title(f"Self-evaluation · {title}")
    for box in page.get_by_role("checkbox").all():
        box.check()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/survey")
    expect(page).to_have_title(f"A short survey · {title}")
    ownership = page.get_by_role("group", name="I feel like the story is mine. (required)")
    # The ends of a scale say which end they are: "1" alone does not tell agree from disagree.
    expect(ownership.get_by_role("radio", name="1 (Strongly disagree)", exact=True)).to_have_count(1)
    expect(ownership.get_by_role("radio", name="7 (Strongly agree)", exact=True)).to_have_count(1)
    expect(ownership.get_by_role("radio", name="4", exact=True)).to_have_count(1)
    # The free-text answer had no name of its own.
    expect(page.get_by_role("textbox", name="Anything else you would like to tell us?")).to_have_count(1)

    page.get_by_role("button", name="Submit").click()  # nothing answered: the page asks again
    expect(page.locator(".error").first).to_have_text(NEEDED)
    # The focus was at the top of the page, the errors apart from their fields.
    first_refused = page.get_by_role("radio", name="Yes")
    expect(first_refused).to_be_focused()
    expect(first_refused).to_have_accessible_description(NEEDED)
    expect(ownership.get_by_role("radio", name="4", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(ownership.get_by_role("radio", name="4", exact=True)).to_have_accessible_description(NEEDED)
    # Answering by keyboard alone from there: arrows choose within a group, Tab goes on.
    page.keyboard.press("Space")
    for _ in range(3):
        page.keyboard.press("Tab")
        page.keyboard.press("Space")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url("**/complete")
    expect(page).to_have_title(f"Your verification code · {title}")
    expect(page.get_by_test_id("verification-code")).not_to_be_empty()
