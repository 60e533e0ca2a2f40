"""A comment of several lines in Debian's Chromium: the browser sends its line breaks as CRLF,
the comment box holds LF ones, and the comment is stored as the box holds it. Once saved, it is
not taken for an unsaved one: n does not send it again after a save, and leaving a page whose
save was refused as changed in another tab does not ask when its comment is the stored one."""

from __future__ import annotations

import pytest

from study.review import audit
from study.review import ratings as rating_store
from study.store import reading
from tests.review.chromium import in_chromium
from tests.review.test_browser import open_first_submission, served  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

COMMENT = "Strong ending.\nThe middle drags."


def test_a_saved_comment_of_several_lines_is_not_sent_again_nor_kept_as_unsaved(served, engine):
    in_chromium(lambda page: line_break_steps(page, served, engine))


def saved(page) -> None:
    page.wait_for_function("() => document.getElementById('rating-status').textContent.includes('saved')")


def next_submission_without_rating(page, first: str) -> None:
    """n opens the next submission, sending no rating on the way."""
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/rating") else None)
    page.keyboard.press("n")
    page.wait_for_function(
        "first => document.querySelector('[data-testid=submission-id]')?.textContent !== first",
        arg=first,
    )
    assert sent == []


def line_break_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    page.get_by_test_id("comment").fill(COMMENT)
    page.keyboard.press("Escape")
    page.keyboard.press("4")
    saved(page)
    other = page.context.new_page()  # a second tab on the same rating, comment and all
    other.goto(page.url)
    assert other.get_by_test_id("comment").input_value() == COMMENT

    page.keyboard.press("5")  # the first tab changes the score; the comment stays
    saved(page)

    other.keyboard.press("3")  # the second tab still shows 4: refused, 5 is taken from the server
    other.wait_for_function("() => document.getElementById('rating-status').dataset.tone === 'error'")
    assert "changed in another tab" in other.get_by_test_id("rating-status").text_content()
    asked: list[str] = []
    other.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    other.close(run_before_unload=True)  # its comment is the stored one: nothing to keep
    for _ in range(50):  # the tab closes, or the browser asks whether to leave
        if asked or other.is_closed():
            break
        page.wait_for_timeout(100)
    assert asked == [] and other.is_closed()

    next_submission_without_rating(page, first)  # the comment n would save is saved already
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
        logged = [e["action"] for e in audit.entries(connection, submission_id=first)]
    assert (stored["score"], stored["comment"]) == (5, COMMENT)
    rated = [action for action in logged if action.startswith("rating.")]
    assert rated == [audit.RATING_EDIT, audit.RATING_CREATE]  # newest first: the refused 3 wrote none
