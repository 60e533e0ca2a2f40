"""Nothing a writer types is lost: not to a server crash, not to a reload."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from study.curation.validate import validate_events
from tests.browser.conftest import MIN_SECONDS
from tests.browser.participant import (
    check_release_format,
    editor_text,
    evaluate_and_survey,
    export_session,
    finish_writing,
    replay,
    start_writing,
    type_text,
    wait_saved,
)
from tests.browser.routed import Routed

pytestmark = pytest.mark.browser


def stored_seqs(study, session_id: str) -> list[int]:
    from study.store import events as event_store
    from study.store import make_engine, reading

    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            return event_store.stored_seqs(connection, session_id)
    finally:
        engine.dispose()


def test_a_server_crash_mid_session_loses_no_keystroke(page, task_server_process, study_dir, tmp_path):
    server = task_server_process
    session_id = start_writing(page, server.url)
    prompt = editor_text(page)
    type_text(page, " Before the crash.")
    wait_saved(page)

    server.kill()
    type_text(page, " While the server is down.")
    page.keyboard.press("Tab")  # a suggestion request fails too, and is logged
    expect(page.get_by_test_id("status")).to_contain_text("Could not get suggestions")
    expect(page.get_by_test_id("save-state")).to_contain_text("Reconnecting")
    type_text(page, " Still typing.")

    server.start()
    type_text(page, " Back again.")
    wait_saved(page)

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    expected = prompt + " Before the crash. While the server is down. Still typing. Back again."
    assert editor_text(page) == expected
    type_text(page, " After the reload.")
    final = editor_text(page)
    assert final == expected + " After the reload."

    finish_writing(page)
    evaluate_and_survey(page)
    # A finished session's state is no longer served (issue 10): ask the database.
    seqs = stored_seqs(server.study, session_id)
    assert seqs == list(range(len(seqs)))  # no gaps in the stored sequence numbers
    log = export_session(study_dir, tmp_path / "export", session_id)
    check_release_format(log)
    assert len(log) == len(seqs)
    assert replay(log) == final + "\n"
    assert "suggestion-fail" in [record["eventName"] for record in log]
    typed = "".join(
        op.get("insert", "")
        for record in log
        if record["eventName"] == "text-insert" and record["eventSource"] == "user"
        for op in record["textDelta"]["ops"]
    )
    assert typed == final[len(prompt):]


def test_a_reload_restores_the_text_and_never_initializes_twice(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    prompt = editor_text(page)

    # Reload at once, before the events are sent: this browser's copy restores the text.
    type_text(page, " One")
    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    assert editor_text(page) == prompt + " One"
    type_text(page, " two")
    wait_saved(page)

    # A browser that lost its copy gets the text back from the server's log.
    page.evaluate("() => localStorage.clear()")
    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    assert editor_text(page) == prompt + " One two"
    type_text(page, " three")
    final = editor_text(page)
    wait_saved(page)

    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    check_release_format(log)
    assert replay(log) == final + "\n"
    assert final == prompt + " One two three"


def test_a_reload_while_an_input_method_composes_restores_the_text_the_log_holds(page, task_server, study_dir, tmp_path):
    # A writer of Chinese asks for suggestions and, while they come, composes "wom" (not yet a
    # character); the list opens, the server acknowledges, and the page reloads (a crash, a tab
    # closed and reopened). The page's saved copy held the uncommitted "wom": restored, it was
    # on screen but in no event, and every later edit was refused ("The server did not accept
    # part of your log"), so the writer could not finish. And the list's record put the caret
    # among those letters: past the end of the text the log replays to.
    suggestions = Routed(page, "**/suggestions")
    session_id = start_writing(page, task_server.url)
    type_text(page, " Start")
    typed = editor_text(page)
    suggestions.hold()
    page.keyboard.press("Tab")
    asked = suggestions.first_held("Tab")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.imeSetComposition", {"text": "wom", "selectionStart": 3, "selectionEnd": 3})
    asked.continue_()
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    wait_saved(page)  # the acknowledgement comes while the input method composes
    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    assert editor_text(page) == typed
    type_text(page, " on.")
    wait_saved(page)
    expect(page.get_by_test_id("status")).to_be_empty()
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == editor_text(page) + "\n" == typed + " on.\n"
    assert [issue.render() for issue in validate_events(log).issues] == []


def test_an_emoji_in_the_text_replays_to_the_text_on_screen(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    type_text(page, " The sun \U0001F600 shines.")
    wait_saved(page)
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == editor_text(page) + "\n"


def test_a_captive_portals_page_in_place_of_the_servers_answer_loses_no_keystroke(page, task_server, study_dir, tmp_path):
    # The writer's Wi-Fi asks them to log in again: every request is redirected to the portal's
    # login page, which answers 200 with HTML. The page took each batch for refused by the
    # server, set its events aside ("The server did not accept part of your log") and sent the
    # later ones without them; back online, the text never became "All changes saved".
    events = Routed(page, "**/events")
    session_id = start_writing(page, task_server.url)
    type_text(page, " Before.")
    wait_saved(page)
    portal = "<html><body>Please log in to the hotel Wi-Fi.</body></html>"
    events.answer = lambda route: route.fulfill(status=200, content_type="text/html", body=portal)
    type_text(page, " During the portal.")
    expect(page.get_by_test_id("save-state")).to_have_text("Reconnecting… your text is kept in this browser")
    events.answer = None
    type_text(page, " After.")
    wait_saved(page)
    expect(page.get_by_test_id("status")).not_to_contain_text("did not accept")

    seqs = stored_seqs(task_server.study, session_id)
    assert seqs == list(range(len(seqs)))  # no event set aside
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == editor_text(page) + "\n"


@contextmanager
def _the_same_link_elsewhere(browser, page):
    """The session's link opened in another browser (a phone, another computer), its editor
    ready; closed again after."""
    elsewhere = browser.new_context()
    try:
        other = elsewhere.new_page()
        other.goto(page.url)
        expect(other.get_by_test_id("editor")).to_be_editable()
        yield other
    finally:
        elsewhere.close()


def test_a_browser_whose_copy_is_older_than_the_servers_takes_the_servers(page, browser, task_server, study_dir, tmp_path):
    # The writer writes here, goes on on another computer (the same session's link), then comes
    # back here: this browser's copy is older than what the server stored, and its next events
    # would take numbers the other computer's events already hold (acknowledged as resends).
    session_id = start_writing(page, task_server.url)
    prompt = editor_text(page)
    type_text(page, " Here.")
    wait_saved(page)

    with _the_same_link_elsewhere(browser, page) as other:
        assert editor_text(other) == prompt + " Here."
        other.keyboard.type(" There.")
        wait_saved(other)

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    assert editor_text(page) == prompt + " Here. There."
    type_text(page, " Back.")
    wait_saved(page)
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == prompt + " Here. There. Back.\n"


def test_a_session_written_in_two_browsers_at_once_tells_the_second_its_text_was_not_kept(page, browser, task_server, study_dir, tmp_path):
    # The writer opens the session's link in a second browser (a phone, a private window) and
    # writes in both. Both number their next events alike: the server keeps the first to
    # arrive, and the other browser must not say "All changes saved" over text it never kept.
    session_id = start_writing(page, task_server.url)
    prompt = editor_text(page)
    type_text(page, " Here.")
    wait_saved(page)

    with _the_same_link_elsewhere(browser, page) as other:
        type_text(page, " One.")
        wait_saved(page)
        other.keyboard.type(" Two.")
        expect(other.get_by_test_id("status")).to_contain_text("another window", timeout=15_000)
        expect(other.get_by_test_id("save-state")).not_to_have_text("All changes saved")
        expect(other.get_by_test_id("editor")).not_to_be_editable()

    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == prompt + " Here. One.\n"


def test_a_writer_who_moves_to_a_second_tab_and_finishes_there_keeps_every_event(page, task_server, study_dir, tmp_path):
    # The writer asks for suggestions, then opens the session in a second tab before they come,
    # and writes and finishes there. The first tab's list opened once the model answered, on a
    # page that logs nothing more: accepted, its text was on that screen and in no event.
    suggestions = Routed(page, "**/suggestions")
    session_id = start_writing(page, task_server.url)
    type_text(page, " Asked.")
    suggestions.hold()
    page.keyboard.press("Tab")
    asked = suggestions.first_held("Tab")
    second = page.context.new_page()
    finishing = Routed(second, "**/writing/finish")
    second.goto(page.url)
    expect(second.get_by_test_id("editor")).to_be_editable()
    page.bring_to_front()  # the writer looks back at the first tab
    expect(page.get_by_test_id("status")).to_contain_text("open in another tab")
    expect(page.get_by_test_id("spinner")).to_be_visible()
    shown = editor_text(page)
    asked.continue_()
    expect(page.get_by_test_id("spinner")).to_be_hidden()
    page.keyboard.press("Enter")  # would accept a list, were one open
    expect(page.get_by_test_id("suggestion")).to_have_count(0)
    assert editor_text(page) == shown
    second.bring_to_front()

    # In the second tab: the writer clicks in the text while the finish is on its way. The
    # finish names the last event sent; a caret move logged after it was numbered, never stored.
    second.keyboard.type(" Finished here.")
    wait_saved(second)
    finishing.hold()
    finish = second.get_by_test_id("finish")
    expect(finish).to_be_enabled(timeout=15_000)
    finish.click()
    held = finishing.first_held("Finish")
    final = editor_text(second)
    second.get_by_test_id("editor").click(position={"x": 30, "y": 10})
    second.keyboard.press("ArrowRight")
    numbered = second.evaluate("(key) => JSON.parse(localStorage.getItem(key)).nextSeq", f"study.editor.v1.{session_id}")
    held.continue_()
    second.wait_for_url("**/evaluation")

    assert stored_seqs(task_server.study, session_id) == list(range(numbered))
    log = export_session(study_dir, tmp_path / "export", session_id)
    assert replay(log) == final + "\n"


def test_a_finish_whose_answer_never_comes_is_sent_again_and_the_writer_moves_on(page, task_server, study_dir, tmp_path):
    # The finish request's connection is dropped without a word (a proxy holding it, a network
    # gone quiet): the page must not wait on "Saving your text…" for as long as the browser
    # keeps the request open. The page's clock is run forward instead of waited for.
    finishing = Routed(page, "**/writing/finish")
    session_id = start_writing(page, task_server.url)
    type_text(page, " Written.")
    wait_saved(page)
    finishing.hold(count=1)  # the first finish is on its way, and stays there
    page.clock.install()
    finish = page.get_by_test_id("finish")
    page.clock.run_for(MIN_SECONDS * 1000 + 1000)
    expect(finish).to_be_enabled()
    finish.click()
    finishing.first_held("Finish")

    page.clock.run_for(60_000)  # past the finish's timeout, and the pause before it tries again

    page.wait_for_url("**/evaluation")
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log).rstrip("\n").endswith(" Written.")
