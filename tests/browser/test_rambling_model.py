"""A model that writes on without ending a sentence, at a large max_tokens: its suggestions
are longer than the editor's log holds for one (schemas/event-batch.schema.json), and the writer
must still be able to take one, write on and finish."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from study.suggest.postprocess import MAX_CHARS
from tests.browser.participant import editor_text, export_session, finish_writing, replay, start_writing, type_text, wait_saved

pytestmark = pytest.mark.browser

RAMBLE = " and then" * 700  # 6,300 characters, no full stop


class _RamblingBackend:
    """The deterministic model, each output one long run-on sentence."""

    def __init__(self):
        from study.lm.backends import DeterministicBackend

        self.inner = DeterministicBackend()
        self.model_id = self.inner.model_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, prompt, **options):
        from dataclasses import replace

        return [
            replace(g, text=f"{RAMBLE} {n}", tokens=[f"{RAMBLE} {n}"], token_logprobs=[-0.1])
            for n, g in enumerate(self.inner.generate(prompt, **options))
        ]


@pytest.fixture
def endpoint():
    from study.lm.server import serve_in_thread

    base_url, stop = serve_in_thread(_RamblingBackend())
    yield base_url
    stop()


def test_a_suggestion_longer_than_the_log_holds_is_cut_and_the_writer_finishes(page, task_server, study_dir, tmp_path):
    # The list's suggestion-open was refused ("currentSuggestions[0].original: must have at most
    # 5000 characters"), the page said "Not saved on the server", and Finish said "Some of your
    # log was not accepted by the server" for good.
    session_id = start_writing(page, task_server.url)
    type_text(page, " Go")
    before = editor_text(page)
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible()
    page.keyboard.press("Enter")
    assert editor_text(page) == before + RAMBLE[:MAX_CHARS].rstrip()
    type_text(page, " and so on.")
    wait_saved(page)
    final = editor_text(page)
    finish_writing(page)

    log = export_session(study_dir, tmp_path / "export", session_id)
    assert replay(log) == final + "\n"
    shown = [r["currentSuggestions"] for r in log if r["eventName"] == "suggestion-open"]
    assert shown and all(len(item["original"]) <= MAX_CHARS for items in shown for item in items)
