"""A writer's whole session in a real browser, and the log a researcher exports from it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.participant import (
    check_release_format,
    editor_text,
    evaluate_and_survey,
    export_session,
    finish_writing,
    replay,
    start_writing,
    type_text,
)

pytestmark = pytest.mark.browser


def test_a_writer_uses_suggestions_and_the_export_replays_the_final_text(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    suggestions = page.get_by_test_id("suggestion")
    spinner = page.get_by_test_id("spinner")
    prompt = editor_text(page)
    assert prompt and not prompt.endswith("\n")
    assert page.evaluate("() => document.activeElement.dataset.testid") == "editor"
    expect(page.get_by_test_id("finish")).to_be_disabled()

    # The caret starts after the prompt.
    type_text(page, " The night was cold.")
    assert editor_text(page) == prompt + " The night was cold."

    # Tab: suggestions under the caret; arrows move the highlight; Enter accepts it.
    page.keyboard.press("Tab")
    expect(suggestions.first).to_be_visible()
    expect(spinner).to_be_hidden()
    shown = suggestions.count()
    assert 2 <= shown <= 5
    expect(suggestions.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    expect(suggestions.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    expect(suggestions.nth(1)).to_have_attribute("aria-selected", "true")
    chosen = suggestions.nth(1).inner_text()
    page.keyboard.press("Enter")
    expect(suggestions).to_have_count(0)
    assert editor_text(page).endswith(chosen)
    assert editor_text(page).startswith(prompt + " The night was cold.")

    # Accepted text goes at the END, wherever the caret is; the caret follows it.
    page.keyboard.press("Control+Home")
    page.keyboard.press("Tab")
    expect(suggestions.first).to_be_visible()
    suggestions.last.hover()
    clicked = suggestions.last.inner_text()
    before = editor_text(page)
    suggestions.last.click()
    expect(suggestions).to_have_count(0)
    assert editor_text(page).startswith(before) and editor_text(page).endswith(clicked)
    type_text(page, " Then")
    assert editor_text(page).endswith(clicked + " Then")

    # Esc hides, Shift+Tab shows the same list again, typing hides it and types.
    page.keyboard.press("Tab")
    expect(suggestions.first).to_be_visible()
    listed = suggestions.all_inner_texts()
    page.keyboard.press("Escape")
    expect(suggestions).to_have_count(0)
    page.keyboard.press("Shift+Tab")
    expect(suggestions.first).to_be_visible()
    assert suggestions.all_inner_texts() == listed
    type_text(page, " silence.")
    expect(suggestions).to_have_count(0)

    # Clicking outside the list hides it too.
    page.keyboard.press("Shift+Tab")
    expect(suggestions.first).to_be_visible()
    page.get_by_test_id("timer").click()
    expect(suggestions).to_have_count(0)
    page.get_by_test_id("editor").focus()
    page.keyboard.press("Control+End")

    # Ordinary editing: move back, select, replace, delete.
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowLeft")
    type_text(page, "CE")  # "silence." -> "silenCE."
    page.keyboard.press("Control+End")
    page.keyboard.press("Backspace")
    type_text(page, "!")
    final = editor_text(page)
    assert final.endswith(" silenCE!")

    finish_writing(page)
    code = evaluate_and_survey(page)
    assert len(code) >= 6

    log = export_session(study_dir, tmp_path / "export", session_id)
    check_release_format(log)
    assert log[0]["currentDoc"] == prompt + "\n"
    assert log[0]["currentCursor"] == len(prompt)
    assert replay(log) == final + "\n"

    names = [record["eventName"] for record in log]
    for name in ("suggestion-get", "suggestion-open", "suggestion-down", "suggestion-up",
                 "suggestion-hover", "suggestion-reopen", "suggestion-select", "text-delete",
                 "cursor-backward", "cursor-forward", "cursor-select"):  # fmt: skip
        assert name in names, name
    assert names.count("suggestion-open") == 3

    # Each accepted suggestion is select (user), close (api), insert (api) of an item's
    # `original` at the end of the text, as in the CoAuthor release.
    selects = [i for i, name in enumerate(names) if name == "suggestion-select"]
    assert len(selects) == 2
    for i, expected_index in zip(selects, [1, shown - 1]):
        select, close, insert = log[i : i + 3]
        assert (select["eventSource"], close["eventName"], close["eventSource"]) == ("user", "suggestion-close", "api")
        assert (insert["eventName"], insert["eventSource"]) == ("text-insert", "api")
        assert select["currentSuggestionIndex"] == expected_index
        opened = next(r for r in reversed(log[:i]) if r["eventName"] == "suggestion-open")
        item = opened["currentSuggestions"][expected_index]
        doc_before = replay(log[:i])
        assert insert["textDelta"] == {"ops": [{"retain": len(doc_before) - 1}, {"insert": item["original"]}]}
        assert insert["currentCursor"] == len(doc_before) - 1 + len(item["original"])
        # The model continued the text itself, not a new paragraph after Quill's final "\n".
        assert item["original"].startswith(" ")
    # currentHoverIndex is "" until the first select or hover; a select by Enter names the
    # chosen item there too, as every select of the release does (test_real_session_retyped.py).
    first_hover = names.index("suggestion-hover")
    assert selects[0] < first_hover
    assert log[selects[0] - 1]["currentHoverIndex"] == ""
    assert log[selects[0]]["currentHoverIndex"] == 1
    assert log[first_hover]["currentHoverIndex"] == shown - 1
    assert log[-1]["currentHoverIndex"] == shown - 1  # persists, as in the release

    # Dismissals are the writer's: Esc, and typing while the list is shown.
    reopen = names.index("suggestion-reopen")
    assert log[reopen - 1]["eventName"] == "suggestion-close" and log[reopen - 1]["eventSource"] == "user"
    assert log[reopen + 1]["eventName"] == "suggestion-close" and log[reopen + 1]["eventSource"] == "user"
    assert log[reopen + 2]["eventName"] == "text-insert" and log[reopen + 2]["textDelta"]["ops"][-1] == {"insert": " "}

    selected = next(r for r in log if r["eventName"] == "cursor-select")
    assert selected["cursorRange"]["length"] == 1
    assert all(isinstance(r["currentSuggestionIndex"], int) for r in log)


def test_the_back_button_after_finishing_leads_to_the_step_the_writer_is_at(page, task_server):
    # The browser showed its cached editor, which could not load a finished session's text and
    # said "Cannot load your session yet (...); retrying…" for as long as it stayed open.
    start_writing(page, task_server.url)
    type_text(page, " The end.")
    finish_writing(page)
    page.go_back()
    page.wait_for_url("**/evaluation")
    expect(page.get_by_test_id("self-evaluation").first).to_be_visible()
    page.go_back()  # and again, from further back
    page.wait_for_url("**/evaluation")


def test_the_back_button_after_a_page_that_asked_again_leads_to_the_step_the_writer_is_at(page, task_server):
    # A survey sent with a question unanswered is shown again as the answer to its POST. Back
    # from the next page then led to Chromium's "Confirm Form Resubmission" error page
    # (net::ERR_CACHE_MISS) instead of the step the writer is at.
    start_writing(page, task_server.url)
    type_text(page, " The end.")
    finish_writing(page)
    for box in page.get_by_test_id("self-evaluation").all():
        box.check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/survey")
    page.get_by_test_id("next").click()  # nothing answered: the page asks again
    expect(page.locator(".error").first).to_have_text("This question needs an answer.")
    code = evaluate_and_survey(page)
    page.go_back()
    page.wait_for_url("**/complete")
    expect(page.get_by_test_id("verification-code")).to_have_text(code)
    page.reload()  # a reload of the page that asked again is no resubmission either
    expect(page.get_by_test_id("verification-code")).to_have_text(code)


def test_a_writer_using_only_the_keyboard_reaches_the_finish_button(page, task_server):
    # Tab and Shift+Tab belong to the suggestions in the editor, so focus could never leave it:
    # a writer without a mouse could not press Finish. Esc with nothing to hide, then Tab,
    # leaves the text; Esc that hides the list does not.
    start_writing(page, task_server.url)
    type_text(page, " The end.")
    expect(page.get_by_test_id("finish")).to_be_enabled(timeout=15_000)
    focused = lambda: page.evaluate("() => document.activeElement.dataset.testid")  # noqa: E731
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Escape")  # hides the list
    page.keyboard.press("Tab")  # asks again
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    assert focused() == "editor"
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("suggestion")).to_have_count(0)
    page.keyboard.press("Escape")  # nothing left to hide
    expect(page.get_by_test_id("status")).to_have_text("Press Tab to leave the text (to the Finish button).")
    page.keyboard.press("Tab")
    assert focused() == "finish"
    expect(page.get_by_test_id("status")).to_have_text("")
    page.keyboard.press("Shift+Tab")  # back into the text, where Tab asks for suggestions again
    assert focused() == "editor"
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url("**/evaluation")
