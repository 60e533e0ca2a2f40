"""What a writer using a screen reader is told on the chat study's page (CollabLLM App. E step 3):
a reply once, whole, when it has come; not the conversation again after a reload, not their own
message, not a streamed reply piece by piece; and a reply that failed (tests/browser/
screen_reader.py reads the live regions from Chromium's accessibility tree)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from tests.browser.chat_participant import start_chat
from tests.browser.conftest import _serve_in_thread, free_port
from tests.browser.screen_reader import live_text, wait_said
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser

ASKED = "Could you suggest an opening for my piece?"
WRITING = "() => { const item = document.querySelector('[data-testid=chat-writing]'); return item && item.textContent; }"


class _SlowWriter:
    """The deterministic model writing a word at a time, so a reply streams for seconds."""

    def __init__(self):
        from study.lm.backends import DeterministicBackend

        self.inner = DeterministicBackend()
        self.model_id = self.inner.model_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, prompt, *, on_token=None, **options):
        def slowly(index, token):
            time.sleep(0.08)
            on_token(index, token)

        return self.inner.generate(prompt, on_token=slowly if on_token else None, **options)


def _serve(folder, endpoint):
    """The chat study written in `folder`, answered by the model at `endpoint`, served in a thread."""
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    study = config.load(folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=endpoint))
    return _serve_in_thread(study)


@pytest.fixture
def slow_chat(tmp_path):
    from study.lm.server import serve_in_thread

    model_url, stop_model = serve_in_thread(_SlowWriter())
    server, thread = _serve(tmp_path / "chat-study", model_url)
    yield f"http://127.0.0.1:{server.port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    stop_model()


def _reply_text(page) -> str:
    # The stored reply's own text, without its "Insert into document" button if it has one.
    return page.locator("[data-testid=chat-message][data-role=assistant]").last.evaluate(
        "item => item.firstChild.textContent")


def test_a_reply_is_said_once_whole_and_a_reload_does_not_read_the_conversation_again(page, slow_chat):
    # The message list was a live region: each streamed piece, the writer's own message, and
    # after a reload the whole conversation were read out.
    start_chat(page, slow_chat)
    page.get_by_test_id("chat-input").fill(ASKED)
    page.get_by_test_id("chat-send").click()
    expect(page.get_by_test_id("chat-writing")).not_to_have_text("", timeout=10_000)
    looked = 0
    deadline = time.monotonic() + 60
    while True:  # the reply as the model writes it, until the stored one replaces it
        shown = page.evaluate(WRITING)
        if shown is None:
            break
        assert time.monotonic() < deadline, f"the streamed reply was never replaced by the stored one in 60 s; it shows {shown!r}"
        said = live_text(page)
        assert ASKED not in said and not (shown.strip() and shown.strip() in said), said
        looked += 1
        page.wait_for_timeout(150)
    assert looked >= 3, "the reply was not streamed long enough to listen to it"
    expect(page.get_by_test_id("exchange-count")).to_have_text("1 of 8 exchanges")
    reply = _reply_text(page)
    said = wait_said(page, f"The assistant replied: {reply}")
    assert ASKED not in said, said

    page.reload()
    expect(page.get_by_test_id("document")).to_have_attribute("data-ready", "true")
    expect(page.get_by_test_id("chat-message")).to_have_count(2)
    page.wait_for_timeout(500)  # an announcement is made 50 ms after its call
    said = live_text(page)
    assert reply not in said and ASKED not in said, said


def test_a_reply_that_failed_is_said(page, tmp_path):
    # Nothing listens at the model's address: every reply fails.
    server, thread = _serve(tmp_path / "chat-study", f"http://127.0.0.1:{free_port()}/v1")
    try:
        start_chat(page, f"http://127.0.0.1:{server.port}")
        page.get_by_test_id("chat-input").fill(ASKED)
        page.get_by_test_id("chat-send").click()
        said = wait_said(page, "The assistant did not answer:")
        assert ASKED not in said and "The assistant replied" not in said, said
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
