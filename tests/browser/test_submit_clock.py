"""The platform's clock on the editor: MTurk takes an assignment's work only until its time
([mturk] assignment_minutes from the worker's entry) runs out, so the editor counts its last
ten minutes down beside the minimum-time timer (the chat's exchange count), says when they
start, and says when the time has run out; a lab writer, who has no such clock, sees none of it."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from study.cli import write_study_files
from study.store import make_engine, writing
from study.store import sessions as session_store
from tests.browser.chat_participant import start_chat
from tests.browser.participant import consent_to_editor, start_writing
from tests.browser.test_chat_study import serving
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser

MTURK = "workerId=A1CLOCK0WORKER&assignmentId=3ASSIGNCLOCK1&hitId=3HITCLOCK0001&turkSubmitTo=https://www.mturk.com"


def to_editor_from_mturk(page, base_url: str) -> str:
    page.goto(f"{base_url}/task?{MTURK}")
    return consent_to_editor(page)


def entered_ago(study, session_id: str, seconds: float) -> None:
    """As if the worker had entered `seconds` ago (the assignment's time runs from entry)."""
    engine = make_engine(study.database_url)
    try:
        with writing(engine) as connection:
            session_store.update_session(connection, session_id, created_at=time.time() - seconds)
    finally:
        engine.dispose()


def test_an_mturk_worker_sees_the_last_minutes_counted_down_and_told_when_time_ran_out(page, task_server):
    session_id = to_editor_from_mturk(page, task_server.url)
    clock = page.get_by_test_id("submit-clock")
    expect(clock).to_be_hidden()  # an hour left: nothing to say yet

    entered_ago(task_server.study, session_id, 60 * 60 - 290)  # under five minutes left
    page.reload()
    expect(clock).to_contain_text("Time left to submit: 4:")
    expect(page.get_by_test_id("status")).to_contain_text("ends in 5 minutes or less")

    entered_ago(task_server.study, session_id, 60 * 60 - 3)
    page.reload()
    expect(clock).to_have_text("Time to submit has run out", timeout=15_000)
    expect(page.get_by_test_id("status")).to_contain_text("can no longer be submitted")
    expect(page.get_by_test_id("editor")).to_be_editable()  # the text stays the writer's, and saved


def test_a_chat_participant_from_mturk_sees_the_same_clock(page, tmp_path, model_url):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    with serving(folder, model_url) as (url, study):
        session_id = start_chat(page, url, query=MTURK)
        clock = page.get_by_test_id("submit-clock")
        expect(clock).to_be_hidden()

        entered_ago(study, session_id, 60 * 60 - 290)
        page.reload()
        expect(clock).to_contain_text("Time left to submit: 4:")

        entered_ago(study, session_id, 60 * 60 - 3)
        page.reload()
        expect(clock).to_have_text("Time to submit has run out", timeout=15_000)
        expect(page.get_by_test_id("chat-error")).to_contain_text("can no longer be submitted")


def test_a_lab_writer_has_no_platform_clock(page, task_server):
    start_writing(page, task_server.url, access_code="lab-clock")
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("submit-clock")).to_be_hidden()
