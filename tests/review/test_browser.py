"""The workspace in Debian's Chromium: the replay plays, pauses and scrubs; keyboard rating
(4, then n) stores the rating and opens the next submission."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import update

from study.curation.replay import replay
from study.review import accounts, decisions, queue, submissions
from study.review import ratings as rating_store
from study.store import events as event_store
from study.store import reading, writing
from study.store.review_tables import review_assignments
from tests.browser.conftest import free_port
from tests.review.chromium import in_chromium
from tests.review.conftest import PASSWORD, add_reviewer
from tests.review.sessions import finished_session
from tests.review.test_panel import RESPONSE, TAKEN
from tests.review.test_panel import SCRIPT as ASKING
from tests.review.test_pastes import PASTED
from tests.review.test_pastes import SCRIPT as PASTING

pytestmark = pytest.mark.browser

SCRIPT = [
    ("W", " She met him again."),
    ("S", " He smiled, and she knew."),
    ("W", " It was him."),
    ("D", 8),
    ("W", "always him. The end."),
]


@pytest.fixture
def served(review_study, engine):
    """The workspace alone (as `study review DIR` serves it) with two rateable submissions."""
    for worker in ("A1FIRSTWRITER", "A1SECONDWRITER"):
        finished_session(engine, worker_id=worker, round_name="qualification", script=SCRIPT)
    add_reviewer(engine, "ana")
    yield from serving(review_study, engine)


def serving(review_study, engine):
    from werkzeug.serving import make_server

    from study.review.web import create_review_app

    server = make_server(
        "127.0.0.1", free_port(), create_review_app(review_study, engine=engine), threaded=True
    )
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def open_first_submission(page, url: str) -> str:
    page.goto(f"{url}/review/")
    page.get_by_test_id("name").fill("ana")
    page.get_by_test_id("password").fill(PASSWORD)
    page.get_by_test_id("login").click()
    page.get_by_test_id("start").click()
    page.wait_for_url("**/review/s/S-*")
    return page.get_by_test_id("submission-id").text_content()


def events_of(engine, submission_id: str) -> list[dict]:
    with reading(engine) as connection:
        session_id = submissions.get(connection, submission_id)["session_id"]
        return event_store.records(connection, session_id)


def shown_text(page) -> str:
    return page.get_by_test_id("replay-text").evaluate("node => node.textContent")


def scrub_to(page, milliseconds: int) -> None:
    page.get_by_test_id("replay-scrub").evaluate(
        "(node, value) => { node.value = String(value); node.dispatchEvent(new Event('input')); }",
        milliseconds,
    )


def test_the_replay_scrubs_plays_and_pauses(served, engine):
    in_chromium(lambda page: replay_steps(page, served, engine))


def replay_steps(page, served, engine) -> None:
    submission_id = open_first_submission(page, served)
    events = events_of(engine, submission_id)
    final = replay(events)
    text = page.get_by_test_id("replay-text")
    assert shown_text(page) == final.text  # the final text first, coloured by author
    assert text.locator("span.by-suggestion").first.text_content() == " He smiled, and she knew."
    assert final_ms(events) == 9000  # one event a second (tests/review/sessions.py)
    assert page.get_by_test_id("replay-clock").text_content() == "0:09 / 0:09"

    for milliseconds in (0, 1500, 6500, 7500, 8500, 9000):
        scrub_to(page, milliseconds)
        index = int(text.get_attribute("data-event-index"))
        assert events[index]["eventTimestamp"] - events[0]["eventTimestamp"] <= milliseconds
        assert shown_text(page) == replay(events, at=index).text
    scrub_to(page, 0)
    assert shown_text(page) == events[0]["currentDoc"] and text.get_attribute("data-step") == "0"
    scrub_to(page, 6500)
    assert text.locator("span.by-suggestion").count() == 1  # the accepted suggestion is the AI's

    scrub_to(page, 0)
    page.get_by_test_id("replay-speed").select_option("1")
    page.get_by_test_id("replay-play").click()
    page.wait_for_function("() => Number(document.getElementById('replay-text').dataset.step) >= 1")
    page.keyboard.press("p")  # pause
    assert page.get_by_test_id("replay-play").text_content() == "Play"
    held = page.get_by_test_id("replay-scrub").input_value()
    page.wait_for_timeout(300)
    assert page.get_by_test_id("replay-scrub").input_value() == held and 0 < int(held) < 9000
    page.get_by_test_id("replay-speed").select_option("60")
    page.keyboard.press("p")  # play on, to the end
    page.wait_for_function("() => document.getElementById('replay-play').textContent === 'Play'")
    assert page.get_by_test_id("replay-scrub").input_value() == str(final_ms(events))
    assert shown_text(page) == final.text


def final_ms(events) -> int:
    return max(e["eventTimestamp"] for e in events if e["textDelta"]) - events[0]["eventTimestamp"]


def test_pressing_4_then_n_stores_the_rating_and_opens_the_next_submission(served, engine):
    in_chromium(lambda page: keyboard_steps(page, served, engine))


def keyboard_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    page.keyboard.press("n")  # not rated yet: nothing happens but a hint
    assert "Rate this submission first" in page.get_by_test_id("rating-status").text_content()
    assert page.get_by_test_id("submission-id").text_content() == first
    page.keyboard.press("4")
    page.keyboard.press("n")  # at once: n waits for the rating to be saved
    page.wait_for_function(
        "first => document.querySelector('[data-testid=submission-id]')?.textContent !== first",
        arg=first,
    )
    second = page.get_by_test_id("submission-id").text_content()
    assert second != first and second.startswith("S-")
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert (stored["reviewer"], stored["score"], stored["comment"]) == ("ana", 4, "")


def test_a_digit_typed_into_the_comment_is_text_and_the_rating_reveals_others(served, engine):
    in_chromium(lambda page: comment_steps(page, served, engine))


def comment_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    page.get_by_test_id("comment").fill("")
    page.get_by_test_id("comment").type("ending 5 stars")
    page.keyboard.press("Escape")
    assert page.get_by_test_id("rating-status").text_content() == ""
    page.keyboard.press("5")
    page.wait_for_function(
        "() => document.getElementById('rating-status').textContent.includes('saved')"
    )
    # The chosen score is more than a border: a screen reader hears it as the pressed button.
    pressed = page.get_by_role("button", pressed=True).all()
    assert [button.get_attribute("data-testid") for button in pressed] == ["score-5"]
    page.reload()
    pressed = page.get_by_role("button", pressed=True).all()
    assert [button.get_attribute("data-testid") for button in pressed] == ["score-5"]
    assert page.get_by_test_id("others").is_visible()
    assert page.locator("#progress-rated").text_content() == "1"
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert (stored["score"], stored["comment"]) == (5, "ending 5 stars")


def test_a_submission_a_researcher_decided_meanwhile_lets_the_reviewer_go_on(served, engine):
    in_chromium(lambda page: decided_steps(page, served, engine))


def decided_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    with writing(engine) as connection:
        rita = accounts.add(connection, "rita", PASSWORD, role="researcher")
        decisions.adjudicate(connection, first, rita, 5, "clearly fine", scores=(1, 2, 3, 4, 5))
    page.reload()
    assert "ratings are closed" in page.locator(".rating-panel").text_content()
    page.get_by_test_id("next").click()  # the reviewer cannot rate it: they go on to the next
    page.wait_for_function(
        "first => document.querySelector('[data-testid=submission-id]')?.textContent !== first",
        arg=first,
    )
    assert page.get_by_test_id("submission-id").text_content().startswith("S-")


def test_a_rating_refused_because_the_place_went_to_others_lets_the_reviewer_go_on(served, engine):
    in_chromium(lambda page: place_gone_steps(page, served, engine))


def place_gone_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    # Ana's assignment expired and two other reviewers took and rated the submission.
    with writing(engine) as connection:
        connection.execute(
            update(review_assignments)
            .where(review_assignments.c.submission_id == first)
            .values(assigned_at=time.time() - 25 * 3600)
        )
        for name in ("ben", "cat"):
            other = accounts.add(connection, name, PASSWORD)
            queue.next_for(connection, other, needed=2, assignment_hours=24)
            rating_store.rate(connection, first, other, 4, "", scores=(1, 2, 3, 4, 5))
    page.keyboard.press("4")
    page.wait_for_function(
        "() => document.getElementById('rating-status').textContent.startsWith('Not saved')"
    )
    page.keyboard.press("n")
    page.wait_for_function(
        "first => document.querySelector('[data-testid=submission-id]')?.textContent !== first",
        arg=first,
    )
    assert page.get_by_test_id("submission-id").text_content().startswith("S-")


def test_a_comment_written_after_rating_is_kept_when_the_reviewer_leaves_the_page(served, engine):
    in_chromium(lambda page: comment_after_rating_steps(page, served, engine))


def comment_after_rating_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    page.keyboard.press("4")
    page.wait_for_function("() => document.getElementById('rating-status').textContent.includes('saved')")
    page.get_by_test_id("comment").fill("The ending comes out of nowhere.")
    page.get_by_role("link", name="My queue").click()  # not n: the reviewer goes elsewhere
    page.wait_for_url(f"{served}/review/")
    page.get_by_role("link", name=first).click()
    assert page.get_by_test_id("comment").input_value() == "The ending comes out of nowhere."
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert stored["comment"] == "The ending comes out of nowhere."

    page.get_by_test_id("comment").fill("On reflection, the ending works.")  # still typing
    with page.expect_event("dialog") as asked:
        page.close(run_before_unload=True)  # closing the tab: the browser asks first
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()  # stays, and saves it by leaving the box
    page.get_by_test_id("score-4").focus()
    page.wait_for_function("() => document.getElementById('rating-status').textContent.includes('saved')")
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert stored["comment"] == "On reflection, the ending works."


def test_a_rating_changed_in_another_tab_is_not_written_over_and_the_comment_is_kept(served, engine):
    in_chromium(lambda page: two_tabs_steps(page, served, engine))


def two_tabs_steps(page, served, engine) -> None:
    first = open_first_submission(page, served)
    other = page.context.new_page()  # the same login, a second tab on the same submission
    other.goto(page.url)
    page.get_by_test_id("comment").fill("Strong ending.")
    page.keyboard.press("Escape")
    page.keyboard.press("4")
    page.wait_for_function("() => document.getElementById('rating-status').textContent.includes('saved')")

    other.get_by_test_id("comment").fill("The middle drags.")
    other.keyboard.press("Escape")
    other.keyboard.press("2")  # this tab still shows no rating
    other.wait_for_function("() => document.getElementById('rating-status').dataset.tone === 'error'")
    status = other.get_by_test_id("rating-status").text_content()
    assert "changed in another tab" in status and 'it is now 4 with the comment "Strong ending."' in status
    assert other.get_by_test_id("comment").input_value() == "The middle drags."  # kept
    assert "chosen" in other.get_by_test_id("score-4").get_attribute("class")  # what is stored
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert (stored["score"], stored["comment"]) == (4, "Strong ending.")

    other.keyboard.press("2")  # rating again, knowingly, replaces the other tab's
    other.wait_for_function("() => document.getElementById('rating-status').textContent.includes('saved')")
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert (stored["score"], stored["comment"]) == (2, "The middle drags.")
    page.get_by_test_id("comment").fill("Strong ending, after all.")
    page.keyboard.press("Escape")  # leaving the box saves it: refused, the first tab is stale now
    page.wait_for_function("() => document.getElementById('rating-status').dataset.tone === 'error'")
    assert 'it is now 2 with the comment "The middle drags."' in page.get_by_test_id("rating-status").text_content()
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, first)
    assert (stored["score"], stored["comment"]) == (2, "The middle drags.")



@pytest.fixture
def served_paste_and_panel(review_study, engine):
    """One submission that pasted text from outside and took text from an L0 assistant panel."""
    finished_session(engine, worker_id="A1MIXEDWRITER", round_name="qualification", script=PASTING + ASKING)
    add_reviewer(engine, "ana")
    yield from serving(review_study, engine)


def test_the_reviewer_sees_the_paste_and_the_panel_and_the_replay_keeps_them_in_step(
    served_paste_and_panel, engine
):
    in_chromium(lambda page: paste_and_panel_steps(page, served_paste_and_panel))


def paste_and_panel_steps(page, served) -> None:
    open_first_submission(page, served)
    text = page.get_by_test_id("replay-text")
    assert text.locator("span.by-outside").all_text_contents() == [PASTED]
    assert TAKEN in text.locator("span.by-suggestion").all_text_contents()
    pastes = page.get_by_test_id("pastes")
    assert "1 paste" in pastes.text_content() and "another window" in pastes.text_content()
    panel = page.get_by_test_id("panel")
    assert panel.is_visible() and RESPONSE in panel.text_content()
    assert page.get_by_test_id("panel-used").text_content() == "She loved every one of them,"
    messages = page.get_by_test_id("panel-message")
    assert messages.count() == 4 and all(messages.nth(i).is_visible() for i in range(4))

    scrub_to(page, 0)  # the session's start: no paste yet, the writer has asked nothing
    assert text.locator("span.by-outside").count() == 0
    assert not any(messages.nth(i).is_visible() for i in range(4))
    pastes.get_by_role("button").click()  # the paste's moment
    assert text.locator("span.by-outside").all_text_contents() == [PASTED]
    assert shown_text(page).endswith(PASTED + "\n")
    assert not any(messages.nth(i).is_visible() for i in range(4))  # asked later
    scrub_to(page, 13_000)  # after the first response, before the second request
    assert [messages.nth(i).is_visible() for i in range(4)] == [True, True, False, False]


def test_a_screen_reader_is_told_where_the_ai_s_text_begins_and_ends(served, engine):
    in_chromium(lambda page: authorship_steps(page, served, engine))


def authorship_steps(page, served, engine) -> None:
    """Colour tells the eye who wrote each piece; the accessibility tree (what a screen reader
    reads) says it in words, in the final text and during the replay, and the text itself (what a
    copy or a script gets) stays the writer's."""
    submission_id = open_first_submission(page, served)
    final = replay(events_of(engine, submission_id))
    told = page.get_by_test_id("replay-text").aria_snapshot()
    assert "[AI suggestion] He smiled, and she knew. [end of AI suggestion]" in told
    assert "[prompt] " in told and " She met him again." in told
    assert shown_text(page) == final.text
    scrub_to(page, 6500)  # the replay draws the text anew
    assert "[AI suggestion] He smiled, and she knew. [end of AI suggestion]" in (
        page.get_by_test_id("replay-text").aria_snapshot()
    )


def test_a_screen_reader_hears_the_play_button_say_what_it_does_and_nothing_contrary(served, engine):
    in_chromium(lambda page: play_button_steps(page, served))


def play_button_steps(page, served) -> None:
    open_first_submission(page, served)
    controls = page.get_by_test_id("replay-controls")
    assert 'button "Play"' in controls.aria_snapshot() and "pressed" not in controls.aria_snapshot()
    scrub_to(page, 0)
    page.get_by_test_id("replay-speed").select_option("1")
    page.get_by_test_id("replay-play").click()
    told = controls.aria_snapshot()
    # Not "Pause, pressed": a toggle whose label also changes says two opposite things.
    assert 'button "Pause"' in told and "pressed" not in told
