"""When the model cannot answer, the writer is told and the log says so."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import free_port
from tests.browser.participant import (
    check_release_format,
    editor_text,
    export_session,
    replay,
    start_writing,
    type_text,
    wait_saved,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def endpoint() -> str:
    """Nothing listens here: every suggestion request fails."""
    return f"http://127.0.0.1:{free_port()}/v1"


def test_an_unreachable_model_gives_a_visible_failure_and_a_suggestion_fail_event(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    type_text(page, " It began")
    page.keyboard.press("Tab")

    expect(page.get_by_test_id("status")).to_contain_text("Could not get suggestions")
    # A calm line: nothing about the endpoint, its address or status codes (issue 10).
    status = page.get_by_test_id("status").inner_text()
    assert "not available right now" in status
    assert "127.0.0.1" not in status and "running" not in status and "HTTP" not in status
    expect(page.get_by_test_id("spinner")).to_be_hidden()
    expect(page.get_by_test_id("suggestion")).to_have_count(0)
    # The writer can keep writing; Shift+Tab has no list to show.
    page.keyboard.press("Shift+Tab")
    type_text(page, " anyway.")
    assert editor_text(page).endswith(" It began anyway.")
    wait_saved(page)

    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    check_release_format(log)
    names = [record["eventName"] for record in log]
    get = names.index("suggestion-get")
    assert log[get + 1]["eventName"] == "suggestion-fail"
    assert log[get + 1]["eventSource"] == "api"
    assert "suggestion-open" not in names and "suggestion-reopen" not in names
    assert replay(log) == editor_text(page) + "\n"
