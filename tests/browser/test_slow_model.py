"""A study that gives its model longer than the default to answer ([suggestions]
timeout_seconds): the writer's page waits as long as the server does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from study import config
from study.lm.backends import DeterministicBackend
from study.lm.server import serve_in_thread
from tests.browser.participant import start_writing, type_text

pytestmark = pytest.mark.browser


@pytest.fixture
def endpoint():
    """A model that answers after 22 s: past the page's former fixed 20 s, within the study's 40."""
    base_url, stop = serve_in_thread(DeterministicBackend(delay=22))
    yield base_url
    stop()


def test_suggestions_slower_than_20_s_reach_a_study_that_waits_40(page, task_server_factory, study_dir):
    study = config.load(study_dir)
    server = task_server_factory(replace(study, suggestions=replace(study.suggestions, timeout_seconds=40)))
    start_writing(page, server.url)
    type_text(page, " It began")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("suggestion").first).to_be_visible(timeout=45_000)
    assert "Could not get suggestions" not in page.get_by_test_id("status").inner_text()
