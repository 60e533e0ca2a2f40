"""What the writer keeps when the browser's storage fills up, a model writes Windows line breaks,
or the page is left with a large batch unsent: the text on screen and the stored log agree."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.browser.participant import editor_text, export_session, finish_writing, replay, start_writing, type_text, wait_saved

pytestmark = pytest.mark.browser

# Browser storage fills up (another study's pages, a long outage's pending events): every
# setItem throws from now on, as a full localStorage does.
FILL_STORAGE = """() => {
  Storage.prototype.setItem = function () {
    throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  };
}"""


def test_a_reload_after_the_browser_storage_filled_up_keeps_the_later_text(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    prompt = editor_text(page)
    type_text(page, " Saved here.")
    wait_saved(page)

    page.evaluate(FILL_STORAGE)
    type_text(page, " Typed once the storage was full.")
    wait_saved(page)  # the server has every event
    on_screen = editor_text(page)
    assert on_screen == prompt + " Saved here. Typed once the storage was full."

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    # The writer's text is still there after the reload...
    assert editor_text(page) == on_screen
    type_text(page, " After the reload.")
    wait_saved(page)
    final = editor_text(page)

    # ...and what the server stored replays to it.
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == final + "\n"


# -- a suggestion with a Windows line break --------------------------------------------------


class _CrlfBackend:
    """The deterministic model, each output starting a new paragraph with "\\r\\n" (as a model
    trained on Windows text writes one)."""

    def __init__(self):
        from study.lm.backends import DeterministicBackend

        self.inner = DeterministicBackend()
        self.model_id = self.inner.model_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, prompt, **options):
        from dataclasses import replace

        return [
            replace(g, text="\r\n" + g.text.lstrip(), tokens=["\r\n", g.text.lstrip()], token_logprobs=[-0.1, -0.1])
            for g in self.inner.generate(prompt, **options)
        ]


@pytest.fixture
def endpoint():
    from study.lm.server import serve_in_thread

    base_url, stop = serve_in_thread(_CrlfBackend())
    yield base_url
    stop()


def test_an_accepted_suggestion_with_a_windows_line_break_replays_to_the_text_on_screen(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    type_text(page, " The end of a paragraph.")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Enter")  # accepted: appended at the end
    type_text(page, " And on.")
    wait_saved(page)
    on_screen = editor_text(page)
    assert "\n" in on_screen[on_screen.index("paragraph."):]

    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == on_screen + "\n"


# Storage blocked outright: a page in a third-party frame (MTurk shows the task in one) with
# third-party cookies blocked, as in a private window: reading window.localStorage throws.
BLOCK_STORAGE = """
Object.defineProperty(window, "localStorage", {
  configurable: true,
  get() {
    throw new DOMException("Failed to read the 'localStorage' property from 'Window': Access is denied for this document.", "SecurityError");
  },
});
"""


def test_a_writer_whose_browser_blocks_storage_can_finish(page, task_server):
    page.add_init_script(BLOCK_STORAGE)
    start_writing(page, task_server.url)
    type_text(page, " Written without a saved copy.")
    wait_saved(page)
    finish_writing(page)  # on to the self-evaluation


def test_undo_takes_back_an_accepted_suggestion_as_it_does_typing(page, task_server, study_dir, tmp_path):
    # Ctrl+Z after accepting a suggestion: the writer expects the suggestion gone (Quill's
    # history, which CoAuthor's editor had, undoes it), and the log to show them removing it.
    session_id = start_writing(page, task_server.url)
    type_text(page, " abc")
    typed = editor_text(page)
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Enter")
    assert editor_text(page) != typed
    page.keyboard.press("Control+z")
    assert editor_text(page) == typed
    page.keyboard.press("Control+z")  # and the typing before it, as ever
    assert editor_text(page) != typed and typed.startswith(editor_text(page))
    wait_saved(page)

    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    assert replay(log) == editor_text(page) + "\n"
    last = [(r["eventName"], r["eventSource"]) for r in log if r["eventName"].startswith("text-")][-3:]
    assert last == [("text-insert", "api"), ("text-delete", "user"), ("text-delete", "user")]


def test_a_paste_too_long_for_one_event_is_kept_out_and_the_writer_can_still_finish(page, task_server, study_dir, tmp_path):
    # A writer pastes a whole book (more than the 100,000 characters the event API takes in one
    # insert, schemas/event-batch.schema.json). Logged, its event was refused, and with it every
    # later one (each edits a text the server never had): nothing typed after it was stored, and
    # Finish said "Some of your log was not accepted" for good.
    session_id = start_writing(page, task_server.url)
    type_text(page, " Before.")
    typed = editor_text(page)
    page.keyboard.insert_text("x" * 100_001)
    expect(page.get_by_test_id("status")).to_contain_text("too much text to add at once (100001 characters; at most 100000)")
    assert editor_text(page) == typed
    type_text(page, " After.")
    wait_saved(page)
    final = editor_text(page)
    assert final == typed + " After."
    finish_writing(page)

    log = export_session(study_dir, tmp_path / "export", session_id)
    assert replay(log) == final + "\n"


def test_a_text_grown_past_what_the_finish_takes_is_kept_within_it(page, task_server, study_dir, tmp_path):
    # Two long pastes, each one accepted: the text on screen grew past the 100,000 characters
    # the finish takes (schemas/api/finish-writing.schema.json), and Finish said "Cannot finish:
    # text: must have at most 100000 characters" however often the writer pressed it.
    session_id = start_writing(page, task_server.url)
    page.keyboard.insert_text("x" * 60_000)
    typed = editor_text(page)
    page.keyboard.insert_text("y" * 60_000)
    expect(page.get_by_test_id("status")).to_contain_text("Your text cannot be longer than 99999 characters")
    assert editor_text(page) == typed
    type_text(page, " The end.")
    wait_saved(page)
    final = editor_text(page)
    finish_writing(page)

    log = export_session(study_dir, tmp_path / "export", session_id)
    assert replay(log) == final + "\n"


# -- leaving the page: the beacon ------------------------------------------------------------


def _stored_count(study, session_id: str) -> int:
    from study.store import events as event_store
    from study.store import make_engine, reading

    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            return len(event_store.stored_seqs(connection, session_id))
    finally:
        engine.dispose()


@pytest.mark.parametrize("piece", ["The quick brown fox jumps over the lazy dog. " * 70, "我们在那里度过了一个难忘的夏天。" * 190])
def test_text_written_just_before_leaving_the_page_reaches_the_server(page, task_server, piece):
    # A writer pastes a few passages and leaves the page (closes it, follows a link) before the
    # outbox's next send: the page's beacon is all that carries them to the server. About 9 KB
    # a passage, 10 passages: past the 64 KB a browser lets a page's beacons carry, so the
    # beacon must send a part of them (the rest stays saved for a return).
    session_id = start_writing(page, task_server.url)
    wait_saved(page)
    before = _stored_count(task_server.study, session_id)
    for _ in range(10):
        page.keyboard.insert_text(piece)
    # Not sent yet: the outbox waits a second after the first of them.
    assert page.evaluate("() => document.getElementById('save-state').dataset.state") == "saving"
    page.goto(f"{task_server.url}/healthz")  # the writer leaves
    deadline = time.monotonic() + 5
    while _stored_count(task_server.study, session_id) == before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _stored_count(task_server.study, session_id) > before
