"""Pages say what the study does (issue 25, item 4): the instructions state the minimum writing
time the timer holds ([session] min_seconds), not the study's duration; in the chat study the
periodic rating covers nothing, so the reply it rates can be inserted before or after rating."""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from tests.browser.chat_participant import exchange, rate, start_chat
from tests.browser.conftest import _serve_in_thread
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser


@pytest.fixture
def serve(model_url):
    servers = []

    def start(folder):
        study = config.load(folder)
        study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
        server, thread = _serve_in_thread(study)
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.port}"

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_instructions_state_the_minimum_the_timer_holds(page, tmp_path, serve):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 90", **CONTACT})
    url = serve(folder)
    page.goto(f"{url}/task?access_code=lab-1")
    expect(page.locator("main")).to_contain_text("approximately 15 minutes")  # the whole study
    page.get_by_test_id("consent").check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/instructions")
    instructions = page.locator("main")
    expect(instructions).to_contain_text("collaborate with the AI for at least 1 minute 30 seconds")
    expect(instructions).not_to_contain_text("15 minutes")
    page.get_by_test_id("next").click()
    page.get_by_test_id("prompt-option").first.click()
    page.wait_for_url("**/writing")
    expect(page.get_by_test_id("timer")).to_contain_text("1:")  # the same 90 s, counting down
    expect(page.get_by_test_id("finish")).to_be_disabled()


def test_a_rated_reply_can_be_inserted_before_or_after_rating(page, tmp_path, serve):
    folder = tmp_path / "chat-study"
    # Inserting a reply is the participant-edited pane's ([chat] document_pane = "edited").
    write_study_files(folder, paradigm="chat", replacements={**CONTACT, 'document_pane = "merged"': 'document_pane = "edited"'})
    url = serve(folder)
    start_chat(page, url)
    document = page.get_by_test_id("document")
    for n in range(1, 7):
        exchange(page, f"Here is my thought number {n}.", n)
        if n == 3:  # insert first, then rate
            expect(page.get_by_test_id("rating-panel").first).to_be_visible()
            reply = page.get_by_test_id("chat-message").last.inner_text()
            page.get_by_test_id("insert-reply").last.click()  # fails if the rating covers it
            expect(document).not_to_have_value("")
            assert reply.splitlines()[0][:20] in document.input_value()
            rate(page, 6)
        if n == 6:  # rate first, then insert
            before = document.input_value()
            rate(page, 8)
            page.get_by_test_id("insert-reply").last.click()
            expect(document).not_to_have_value(before)
    expect(page.get_by_test_id("chat-input")).to_be_enabled()
