"""A judge rates a judging task in Chromium: the texts and rubric only, every choice kept
across a reload, Submit refused while a text is unrated, then the verification code."""

from __future__ import annotations

import json

from sqlalchemy import select

from study import config
from study.judging import settings as judging_settings
from study.judging.items import build
from study.store import create_tables, make_engine, reading, writing
from study.store.judging import judging_ratings
from tests.browser.routed import Routed
from tests.browser.screen_reader import wait_said
from tests.judging.finished import finish_sessions, set_section

TEXTS = [
    "The orchard kept its own calendar, blooming whenever someone there was in love.",
    "We argue that public libraries should open at night, when most workers are free.",
    "A cartographer mapped the town's rumors instead of its streets.",
]


def test_a_judge_rates_every_text_and_submits(study_dir, task_server_factory, page):
    (study_dir / "gold.jsonl").write_text(json.dumps({"text": "buy cheap pills now now now", "score": 1}) + "\n")
    set_section(study_dir, "judging", {"unit": "document", "k": 1, "items_per_task": 3, "gold": "gold.jsonl",
                                       "gold_per_task": 1, "question": "How good is this text?"})  # fmt: skip
    study = config.load(study_dir)
    engine = make_engine(study.database_url)
    create_tables(engine)
    sessions = finish_sessions(engine, study, TEXTS)
    with writing(engine) as connection:
        build(connection, study, judging_settings.from_study(study))
    server = task_server_factory(study)

    page.goto(f"{server.url}/judge?access_code=judge-7")
    items = page.get_by_test_id("judging-item")
    assert items.count() == 4
    body = page.content()
    for text in TEXTS:
        assert text in body
    for session_id in sessions:
        assert session_id not in body  # blind: nothing names a session or an arm
    assert all(condition.name not in page.inner_text("main") for condition in study.conditions)

    items.nth(0).get_by_label("5").check()
    items.nth(1).get_by_label("4").check()
    page.get_by_test_id("judging-status").filter(has_text="2 of 4 texts rated").wait_for()
    page.reload()  # choices are stored as they are made
    items = page.get_by_test_id("judging-item")
    assert items.nth(0).get_by_label("5").is_checked() and items.nth(1).get_by_label("4").is_checked()

    page.get_by_test_id("judging-submit").click()
    page.get_by_test_id("judging-status").filter(has_text="Please rate every text first (2 left)").wait_for()
    items.nth(2).get_by_label("3").check()
    items.nth(3).get_by_label("1").check()
    page.get_by_test_id("judging-status").filter(has_text="4 of 4 texts rated").wait_for()
    page.get_by_test_id("judging-submit").click()
    code = page.get_by_test_id("verification-code").inner_text()
    assert len(code) == 12

    with reading(engine) as connection:
        assert sorted(connection.execute(select(judging_ratings.c.score)).scalars()) == [1, 3, 4, 5]
    # Back at the entry, this judge has nothing more to rate (k = 1: every text has its rating).
    page.goto(f"{server.url}/judge?access_code=judge-7")
    assert "nothing left to rate" in page.get_by_test_id("judging-message").inner_text()
    engine.dispose()


def _three_text_round(study_dir, task_server_factory):
    """A built round of one task of three texts, served; the study's engine and the server."""
    set_section(study_dir, "judging", {"unit": "document", "k": 1, "items_per_task": 3})
    study = config.load(study_dir)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    with writing(engine) as connection:
        build(connection, study, judging_settings.from_study(study))
    server = task_server_factory(study)
    return engine, server


def test_submit_right_after_the_last_choice_submits_it_too(study_dir, task_server_factory, page):
    """A judge who picks the last answer and presses Submit at once (Space, then Enter) does not
    wait for that choice to be stored: Submit must not be refused for a text the page shows rated."""
    engine, server = _three_text_round(study_dir, task_server_factory)
    ratings = Routed(page, "**/api/judging/*/ratings", status="judging-status")
    page.goto(f"{server.url}/judge?access_code=judge-8")
    items = page.get_by_test_id("judging-item")
    for index in range(2):
        items.nth(index).get_by_label("4").check()
    page.get_by_test_id("judging-status").filter(has_text="2 of 3 texts rated").wait_for()

    # The last choice's own request, still on its way when Submit is pressed; the submit goes on.
    ratings.hold(which=lambda request: not json.loads(request.post_data or "{}").get("submit"))
    items.nth(2).get_by_label("2").check()
    page.get_by_test_id("judging-submit").click()
    code = page.get_by_test_id("verification-code").inner_text()
    ratings.first_held("choosing the last answer")
    assert len(code) == 12 and len(ratings.held) == 1
    with reading(engine) as connection:
        assert sorted(connection.execute(select(judging_ratings.c.score)).scalars()) == [2, 4, 4]
    page.unroute("**/api/judging/*/ratings")  # the held request went with the task's page
    engine.dispose()


def test_submit_with_a_text_unrated_takes_the_focus_to_it_and_says_why(study_dir, task_server_factory, page):
    # Left on Submit, a keyboard or screen reader user heard "2 left" and had to hunt for them.
    engine, server = _three_text_round(study_dir, task_server_factory)
    page.goto(f"{server.url}/judge?access_code=judge-9")
    items = page.get_by_test_id("judging-item")
    items.nth(0).get_by_label("4").check()
    page.get_by_test_id("judging-status").filter(has_text="1 of 3 texts rated").wait_for()

    page.get_by_test_id("judging-submit").focus()
    page.keyboard.press("Enter")
    wait_said(page, "Please rate every text first (2 left): Text 2 of 3 has no answer yet.")
    focused = page.evaluate("() => [document.activeElement.type, document.activeElement.closest('fieldset')"
                            "?.querySelector('legend').textContent, document.activeElement.checked]")
    assert focused == ["radio", "Text 2 of 3", False]  # there, and nothing chosen for the judge
    page.keyboard.press("ArrowDown")  # the arrows choose among the text's answers
    page.get_by_test_id("judging-status").filter(has_text="2 of 3 texts rated").wait_for()
    with reading(engine) as connection:
        assert len(connection.execute(select(judging_ratings.c.score)).all()) == 2
    engine.dispose()
