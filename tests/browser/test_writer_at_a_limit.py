"""A writer who reaches one of the server's limits is told so and can still finish."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.participant import editor_text, export_session, finish_writing, replay, start_writing, type_text

pytestmark = pytest.mark.browser


@pytest.fixture
def small_study(study_dir):
    toml = study_dir / "study.toml"
    toml.write_text(toml.read_text().replace("[session]\n", "[session]\nmax_events = 100\n", 1))
    return study_dir


def test_a_writer_whose_session_is_full_is_told_and_finishes_with_what_is_stored(page, small_study, task_server_factory, tmp_path):
    # A session stores at most [session] max_events events. Past them every event was refused,
    # the page said part of the log was not accepted, and Finish refused for good: the writer
    # never reached the completion code.
    from study import config

    server = task_server_factory(config.load(small_study))
    session_id = start_writing(page, server.url)
    type_text(page, " one" * 40)  # 160 keystrokes, each an event
    status = page.get_by_test_id("status")
    expect(status).to_contain_text("Your session has recorded as much as it can")
    expect(status).to_contain_text("Please press Finish")
    expect(page.get_by_test_id("editor")).not_to_be_editable()
    shown = editor_text(page)
    finish_writing(page)

    log = export_session(small_study, tmp_path / "export", session_id)
    assert len(log) == 100
    assert replay(log) == shown + "\n"


def test_a_full_session_reloaded_says_so_at_once_and_finishes(page, small_study, task_server_factory, tmp_path):
    # After a reload the page learned that the session was full only when the writer's next
    # edit was refused.
    from study import config

    server = task_server_factory(config.load(small_study))
    session_id = start_writing(page, server.url)
    type_text(page, " one" * 40)
    status = page.get_by_test_id("status")
    expect(status).to_contain_text("Your session has recorded as much as it can")
    shown = editor_text(page)

    page.reload()
    expect(status).to_contain_text("Your session has recorded as much as it can")
    expect(page.get_by_test_id("editor")).not_to_be_editable()
    assert editor_text(page) == shown
    finish_writing(page)

    log = export_session(small_study, tmp_path / "export", session_id)
    assert len(log) == 100
    assert replay(log) == shown + "\n"


def test_a_chat_participant_whose_session_is_full_is_told_and_finishes_with_what_is_stored(page, tmp_path, model_url):
    # The chat page's log has the same quota: past it the document pane's edits were refused,
    # and Finish said "some events have not reached the server yet" for good.
    from study.cli import write_study_files
    from study.paradigms.chat import store as chat_store
    from study.store import make_engine, reading
    from tests.browser.chat_participant import start_chat
    from tests.browser.test_chat_study import EDITED_PANE, serving
    from tests.conftest import CONTACT

    folder = tmp_path / "chat-small"
    write_study_files(folder, paradigm="chat", replacements={
        **CONTACT, **EDITED_PANE, "min_exchanges = 8": "min_exchanges = 1", "[session]\n": "[session]\nmax_events = 100\n",
    })  # fmt: skip
    with serving(folder, model_url) as (url, study):
        session_id = start_chat(page, url)
        document = page.get_by_test_id("document")
        document.click()
        page.keyboard.type(" one" * 40, delay=0)
        expect(page.get_by_test_id("chat-error")).to_contain_text("Your session has recorded as much as it can")
        expect(document).not_to_be_editable()
        shown = document.input_value()
        page.get_by_test_id("chat-input").fill("Here is my thought for the document.")
        page.get_by_test_id("chat-send").click()
        finish = page.get_by_test_id("finish")
        expect(finish).to_be_enabled(timeout=20_000)
        finish.click()
        page.wait_for_url("**/survey")
        engine = make_engine(study.database_url)
        with reading(engine) as connection:
            replayed, _ = chat_store.document_from_events(connection, session_id)
            stored = chat_store.get(connection, session_id)["document"]
        engine.dispose()
        assert replayed == stored == shown != ""


# -- text that comes by another path than typing ------------------------------------------------

FILLER = "All work and no play makes a dull story. "


def _fill_to_the_brim(page, room: int) -> str:
    """The text grown (one paste) to `room` characters short of the 99,999 the finish takes
    (the finish's 100,000 counts the final newline)."""
    page.keyboard.insert_text((FILLER * 3000)[: 99_999 - len(editor_text(page)) - room])
    return editor_text(page)


def test_an_accepted_suggestion_that_would_take_the_text_past_the_finish_is_kept_out(page, task_server, study_dir, tmp_path):
    # Accepting a Tab suggestion near 100,000 characters pushed the text past what the finish
    # takes, and Finish said "Cannot finish: text: must have at most 100000 characters" for good.
    session_id = start_writing(page, task_server.url)
    typed = _fill_to_the_brim(page, room=2)
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible(timeout=15_000)
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("status")).to_contain_text("Your text cannot be longer than 99999 characters")
    assert editor_text(page) == typed
    page.keyboard.press("Escape")
    finish_writing(page)

    log = export_session(study_dir, tmp_path / "export", session_id)
    assert replay(log) == typed + "\n"


@pytest.fixture
def ghost_study(study_dir):
    toml = study_dir / "study.toml"
    text = toml.read_text().replace('mode = "completion"\n', 'mode = "completion"\nparadigm = "L1"\n')
    toml.write_text(text.replace("[texts]\n", "[proactive]\n\n[texts]\n"))
    return study_dir


def test_accepted_ghost_text_that_would_take_the_text_past_the_finish_is_kept_out(page, ghost_study, task_server_factory, tmp_path):
    from study import config

    server = task_server_factory(config.load(ghost_study))
    session_id = start_writing(page, server.url)
    typed = _fill_to_the_brim(page, room=2)
    ghost = page.get_by_test_id("suggestion-ghost")
    expect(ghost).to_be_visible(timeout=15_000)
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("status")).to_contain_text("Your text cannot be longer than 99999 characters")
    assert editor_text(page) == typed
    page.keyboard.press("Escape")
    finish_writing(page)

    log = export_session(ghost_study, tmp_path / "export", session_id)
    assert replay(log) == typed + "\n"


def test_a_chat_reply_inserted_past_what_the_finish_takes_is_kept_out(page, tmp_path, model_url):
    from study.cli import write_study_files
    from study.paradigms.chat import store as chat_store
    from study.store import make_engine, reading
    from tests.browser.chat_participant import start_chat
    from tests.browser.test_chat_study import EDITED_PANE, serving
    from tests.conftest import CONTACT

    folder = tmp_path / "chat-long"
    write_study_files(folder, paradigm="chat", replacements={**CONTACT, **EDITED_PANE, "min_exchanges = 8": "min_exchanges = 1"})
    with serving(folder, model_url) as (url, study):
        session_id = start_chat(page, url)
        document = page.get_by_test_id("document")
        document.click()
        page.keyboard.insert_text((FILLER * 3000)[:99_990])
        written = document.input_value()
        page.get_by_test_id("chat-input").fill("Here is my thought for the document.")
        page.get_by_test_id("chat-send").click()
        page.get_by_test_id("insert-reply").click()
        expect(page.get_by_test_id("chat-error")).to_contain_text("cannot be longer than 100000 characters")
        assert document.input_value() == written
        finish = page.get_by_test_id("finish")
        expect(finish).to_be_enabled()
        finish.click()
        page.wait_for_url("**/survey")
        engine = make_engine(study.database_url)
        with reading(engine) as connection:
            replayed, _ = chat_store.document_from_events(connection, session_id)
            stored = chat_store.get(connection, session_id)["document"]
        engine.dispose()
        assert replayed == stored == written


@pytest.fixture
def panel_study(study_dir):
    from tests.browser.test_proactive_l0 import ARGUMENTATIVE_HIGH

    toml = study_dir / "study.toml"
    text = toml.read_text().replace("\n[texts]\nconsent", '\n[proactive]\nl0 = "assistant"\n\n[texts]\nconsent')
    toml.write_text(text.replace(ARGUMENTATIVE_HIGH, ARGUMENTATIVE_HIGH + 'paradigm = "L1"\n'))
    return study_dir


def test_a_long_question_to_the_assistant_panel_is_kept_to_what_it_takes(page, panel_study, task_server_factory, tmp_path):
    # The writer pastes their whole draft into L0's assistant panel to ask about it. The panel
    # took any length: its request was refused ("request: must have at most 4000 characters"),
    # and a paste past 50,000 characters made a chat-send event the log refuses, so the page said
    # part of the log was not accepted and Finish never went through.
    from study import config
    from tests.browser.test_proactive import logged

    server = task_server_factory(config.load(panel_study))
    session_id = start_writing(page, server.url)
    box = page.get_by_test_id("chat-input")
    box.click()
    page.keyboard.insert_text((FILLER * 2000)[:60_000])
    assert len(box.input_value()) == 4000  # the box takes what a question may hold, and says so
    expect(page.get_by_test_id("assistant-panel")).to_contain_text("At most 4,000 characters.")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("assistant-reply")).to_have_count(1, timeout=15_000)
    finish_writing(page)

    (sent,) = [r for r in logged(server, session_id) if r["eventName"] == "chat-send"]
    assert len(sent["proactive"]["text"]) == 4000
