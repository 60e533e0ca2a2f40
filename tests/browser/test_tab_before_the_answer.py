"""Tab pressed again before the answer came: a suggestion-get and a query for each press, as
CoAuthor logged them (2f923aba events 68-72 and c122541b 943-947 of the shared sample: two gets
0.2-0.5 s apart, two suggestion-opens, the newer list over the older with no close between, and
the writer choosing from the newer). The writer never sees two lists at once, nor an older
press's list over a newer one's; a press the server refuses while an earlier one's list is
still coming is logged, not said (study.paradigms.tab's editor-tab.js)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from playwright.sync_api import Page, Route, expect

from study import config
from tests.browser.participant import (
    check_release_format,
    editor_text,
    export_session,
    replay,
    start_writing,
    type_text,
    wait_saved,
)
from tests.browser.recorded_writer import served
from tests.browser.routed import Routed

pytestmark = pytest.mark.browser

OLDER = [" The door creaked open.", " Nobody was there."]
NEWER = [" A cat walked in.", " The lights went out.", " She held her breath."]


def answer_with(route: Route, originals: list[str]) -> None:
    """The server's answer to a suggestion request, as study.paradigms.tab.api gives it."""
    items = [{"index": i, "original": text, "trimmed": text.strip(), "probability": 0.5} for i, text in enumerate(originals)]
    route.fulfill(status=200, content_type="application/json", body=json.dumps({"suggestions": items}))


def shown(page: Page) -> list[str]:
    return page.get_by_test_id("suggestion").all_inner_texts()


def tab_twice(page: Page, suggestions: Routed) -> tuple[Route, Route]:
    """Tab, and Tab again before the first answer: both requests, held."""
    suggestions.hold()
    type_text(page, " It was late.")
    page.keyboard.press("Tab")
    suggestions.first_held("the first Tab")
    page.keyboard.press("Tab")
    for _ in range(600):
        if len(suggestions.held) == 2:
            return suggestions.held[0], suggestions.held[1]
        page.wait_for_timeout(50)
    raise AssertionError(f"the second Tab sent no request: {len(suggestions.held)} held")


def asked_and_listed(page: Page, study_dir, tmp_path, session_id: str) -> list[tuple[str, str, list[str]]]:
    """The exported log's records from the first Tab on: (event, source, the list it carries)."""
    wait_saved(page)
    log = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    check_release_format(log)
    assert replay(log) == editor_text(page) + "\n"
    first = [r["eventName"] for r in log].index("suggestion-get")
    return [(r["eventName"], r["eventSource"], [item["original"] for item in r["currentSuggestions"]]) for r in log[first:]]


def test_a_second_tab_is_a_second_query_and_its_list_replaces_the_first(page, task_server, study_dir, tmp_path):
    suggestions = Routed(page, "**/suggestions")
    session_id = start_writing(page, task_server.url)
    older, newer = tab_twice(page, suggestions)

    answer_with(older, OLDER)
    expect(page.get_by_test_id("suggestion")).to_have_count(len(OLDER))
    expect(page.get_by_test_id("spinner")).to_be_visible()  # the second press is still asking
    answer_with(newer, NEWER)
    expect(page.get_by_test_id("suggestion")).to_have_count(len(NEWER))
    assert shown(page) == [text.strip() for text in NEWER]
    expect(page.get_by_test_id("spinner")).to_be_hidden()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("suggestion")).to_have_count(0)
    assert editor_text(page).endswith(" It was late." + NEWER[0])

    # Each press a get, each answer an open, the newer over the older with no close between:
    # two queries in Table 3's count (study.curation.metadata's num_query), as in CoAuthor's.
    assert asked_and_listed(page, study_dir, tmp_path, session_id) == [
        ("suggestion-get", "user", []),
        ("suggestion-get", "user", []),
        ("suggestion-open", "api", OLDER),
        ("suggestion-open", "api", NEWER),
        ("suggestion-select", "user", []),
        ("suggestion-close", "api", []),
        ("text-insert", "api", []),
    ]


def test_an_older_press_answered_after_the_newer_one_is_neither_shown_nor_logged(page, task_server, study_dir, tmp_path):
    suggestions = Routed(page, "**/suggestions")
    session_id = start_writing(page, task_server.url)
    older, newer = tab_twice(page, suggestions)

    answer_with(newer, NEWER)
    expect(page.get_by_test_id("suggestion")).to_have_count(len(NEWER))
    answer_with(older, OLDER)
    expect(page.get_by_test_id("spinner")).to_be_hidden()  # the older answer came and was handled
    assert shown(page) == [text.strip() for text in NEWER]
    expect(page.get_by_test_id("status")).to_contain_text(f"{len(NEWER)} suggestions")

    assert asked_and_listed(page, study_dir, tmp_path, session_id) == [
        ("suggestion-get", "user", []),
        ("suggestion-get", "user", []),
        ("suggestion-open", "api", NEWER),
    ]


def test_tab_held_down_is_one_press_one_query(page, task_server, study_dir, tmp_path):
    # The key's repeats (keydown with repeat set, ~30 a second) each asked the model: a writer
    # resting a finger on Tab spent the session's model calls in a second.
    suggestions = Routed(page, "**/suggestions")
    session_id = start_writing(page, task_server.url)
    suggestions.hold()
    type_text(page, " It was late.")
    for _ in range(8):
        page.keyboard.down("Tab")  # the first a press, then the key's repeats
    page.keyboard.up("Tab")
    suggestions.first_held("the held Tab")
    page.keyboard.press("Tab")  # a press of its own: its request comes after any the repeats sent
    for _ in range(600):
        if len(suggestions.held) >= 2:
            break
        page.wait_for_timeout(50)
    assert len(suggestions.held) == 2
    for route in list(suggestions.held):
        answer_with(route, OLDER)
    expect(page.get_by_test_id("spinner")).to_be_hidden()
    gets = [r for r in asked_and_listed(page, study_dir, tmp_path, session_id) if r[0] == "suggestion-get"]
    assert len(gets) == 2


@pytest.fixture
def model():
    """A model that answers when the test says so, the writer's first query with OLDER."""
    with served([OLDER]) as backend:
        yield backend


@pytest.fixture
def endpoint(model) -> str:
    return model.url


def records_made(page: Page, session_id: str) -> int:
    """How many records the page has made (the copy it keeps in the browser: editor-outbox.js)."""
    return page.evaluate("(key) => JSON.parse(localStorage.getItem(key)).nextSeq", f"study.editor.v1.{session_id}")


def test_a_second_tab_refused_by_the_session_limit_while_the_first_is_asking_is_logged_not_said(
    page, task_server_factory, study_dir, tmp_path, model
):
    # One query a minute for the session ([suggestions] max_requests_per_minute): the server
    # takes the first press's query to the model and refuses the second's (429), which the
    # writer need not be told to retry: the first press's list is on its way.
    study = config.load(study_dir)
    server = task_server_factory(replace(study, suggestions=replace(study.suggestions, max_requests_per_minute=1)))
    session_id = start_writing(page, server.url)
    type_text(page, " It was late.")
    page.keyboard.press("Tab")
    model.wait_asked(page, 1)
    made = records_made(page, session_id)
    with page.expect_response(lambda response: response.url.endswith("/suggestions")) as refusal:
        page.keyboard.press("Tab")
    assert refusal.value.status == 429
    for _ in range(600):  # the second get, and what the page made of the refusal
        if records_made(page, session_id) >= made + 2:
            break
        page.wait_for_timeout(50)
    assert "Could not get suggestions" not in page.get_by_test_id("status").inner_text()
    expect(page.get_by_test_id("spinner")).to_be_visible()

    model.answer()
    expect(page.get_by_test_id("suggestion")).to_have_count(len(OLDER))
    expect(page.get_by_test_id("spinner")).to_be_hidden()
    assert "Could not get suggestions" not in page.get_by_test_id("status").inner_text()
    assert len(model.prompts) == 1  # one model call: the limit held

    assert asked_and_listed(page, study_dir, tmp_path, session_id) == [
        ("suggestion-get", "user", []),
        ("suggestion-get", "user", []),
        ("suggestion-fail", "api", []),
        ("suggestion-open", "api", OLDER),
    ]
