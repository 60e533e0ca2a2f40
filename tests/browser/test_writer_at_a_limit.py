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
