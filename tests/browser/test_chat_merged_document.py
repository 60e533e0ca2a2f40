"""The chat study's running document (issue 22, item 4; CollabLLM App. E): by default the page
merges the assistant's replies into a document the participant sees read-only, every merge is
logged and the log replays to what was shown; `[chat] document_pane = "edited"` gives the
participant the pane instead (tests/browser/test_chat_study.py)."""

from __future__ import annotations

import itertools
import json
import threading

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from study.cli import main, write_study_files
from study.lm.backends import DeterministicBackend, Generation
from study.lm.server import serve_in_thread
from study.paradigms.chat import store as chat_store
from study.store import events as event_store
from study.store import make_engine, reading
from study.store.chat_tables import chat_events
from tests.browser.chat_participant import exchange, rate, start_chat, wait_saved
from tests.browser.conftest import TaskServerProcess
from tests.chat.merge_script import ADDED, FIRST, REPLIES, REWRITE
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser


class ScriptedAssistant(DeterministicBackend):
    """Answers every chat request with the next of REPLIES (then "Anything else?")."""

    def __init__(self) -> None:
        super().__init__()
        self._replies = itertools.chain(REPLIES, itertools.repeat("Anything else?"))
        self._lock = threading.Lock()

    def generate(self, prompt: str, *, n: int = 1, **kwargs) -> list[Generation]:
        with self._lock:
            text = next(self._replies)
        return [Generation(text, [-0.5], "stop", [text]) for _ in range(n)]


@pytest.fixture
def merged_study(tmp_path):
    base_url, stop = serve_in_thread(ScriptedAssistant())
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)  # document_pane = "merged"
    server = TaskServerProcess(folder, base_url)
    server.start()
    yield server
    if server.process is not None:
        server.kill()
    stop()


def test_replies_merge_into_a_read_only_running_document_that_is_logged(page, merged_study, tmp_path):
    session_id = start_chat(page, merged_study.url)
    document = page.get_by_test_id("document")
    expect(page.get_by_test_id("merge-note")).to_contain_text("Do not take the text merging into account")
    expect(document).not_to_be_editable()

    exchange(page, "Write me a story about a lighthouse keeper.", 1)
    expect(document).to_have_value(FIRST)  # the draft, without the lead-in or the question
    exchange(page, "Add a line.", 2)
    expect(document).to_have_value(f"{FIRST}\n\n{ADDED}")  # a short draft is added
    exchange(page, "Hmm.", 3)
    rate(page, 7)
    expect(document).to_have_value(f"{FIRST}\n\n{ADDED}")  # a question changes nothing
    exchange(page, "Rewrite it, please.", 4)
    expect(document).to_have_value(REWRITE)  # a new version replaces the document
    expect(page.get_by_test_id("insert-reply")).to_have_count(0)
    document.click()
    page.keyboard.type("typed")
    expect(document).to_have_value(REWRITE)  # read-only: the participant's keys do nothing

    wait_saved(page)
    page.reload()
    expect(document).to_have_value(REWRITE)
    for n in range(5, 9):
        exchange(page, f"Thought number {n}.", n)
        if n == 6:
            rate(page, 8)
    expect(document).to_have_value(REWRITE)
    wait_saved(page)
    page.get_by_test_id("finish").click()
    page.wait_for_url("**/survey")

    engine = make_engine(merged_study.study.database_url)
    with reading(engine) as connection:
        records = event_store.records(connection, session_id, chat_events)
        replayed, _ = chat_store.document_from_events(connection, session_id)
        chat = chat_store.get(connection, session_id)
    engine.dispose()
    merges = [r["messageSeq"] for r in records if r["eventName"] == "chat-merge"]
    assert merges == [1, 3, 5, 7, 9, 11, 13, 15]  # every reply, once, even across the reload
    changes = [(r["eventName"], r["eventSource"], r["messageSeq"]) for r in records if r["eventName"].startswith("text-")]
    assert changes == [("text-insert", "api", 1), ("text-insert", "api", 3), ("text-insert", "api", 7)]
    assert replayed == chat["document"] == REWRITE  # the log replays to what the participant saw

    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(merged_study.directory), "--format", "chat", "--out", str(out), "--all"])
    assert result.exit_code == 0, result.output
    (conversation,) = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert conversation["document"] == REWRITE
    assert [e["eventName"] for e in conversation["events"]].count("chat-merge") == 8
