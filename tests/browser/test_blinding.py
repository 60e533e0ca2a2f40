"""Participants see only what the study means them to see (issue 25, item 3).

Every page and every JSON answer a participant's browser receives, on the whole path of each
paradigm (CoAuthor's Tab suggestions, MindCopilot's L1, L2 and L3 ghost text, CollabLLM's chat),
is read for the names that would unblind the comparison: the condition's name, a paradigm level
(L0-L3), the model and an arm letter ("Assistant A"). The researcher's records keep them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import expect

from study import config
from study.cli import write_study_files
from study.store import events as event_store
from study.store import make_engine, reading
from tests.browser.chat_participant import exchange, rate, start_chat
from tests.browser.conftest import MIN_SECONDS, _serve_in_thread
from tests.browser.participant import evaluate_and_survey, finish_writing, start_writing, type_text, wait_saved
from tests.conftest import CONTACT

pytestmark = pytest.mark.browser


def serve(folder: Path, model_url: str):
    study = config.load(folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
    server, thread = _serve_in_thread(study)
    return study, server, thread


def record_answers(page) -> list[tuple[str, str]]:
    """(url, body) of every HTML page and JSON answer the browser gets from now on."""
    answers: list[tuple[str, str]] = []

    def keep(response):
        kind = response.headers.get("content-type", "")
        if "html" in kind or "json" in kind:
            try:
                answers.append((response.url, response.text()))
            except Exception:  # a page left before its body was read: the next one is read
                pass

    page.on("response", keep)
    return answers


def unblinding(study: config.Study, model_id: str) -> re.Pattern:
    names = {c.name for c in study.conditions} | {c.model for c in study.conditions} | {model_id}
    words = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"\b(?:{words}|L[0-3]|Assistant [A-Z])\b")


def check(answers: list[tuple[str, str]], pattern: re.Pattern) -> None:
    assert answers
    leaks = [(url, match.group(0), body[max(0, match.start() - 60) : match.end() + 60])
             for url, body in answers for match in [pattern.search(body)] if match]  # fmt: skip
    assert not leaks, f"participant answers name the condition: {leaks}"


@pytest.mark.parametrize("paradigm", ["writing", "L1", "L2", "L3"])
def test_no_writing_page_or_answer_names_the_condition(page, tmp_path, model_url, paradigm):
    folder = tmp_path / "study"
    levels = None if paradigm == "writing" else (paradigm,)
    write_study_files(folder, paradigms=levels,
                      replacements={"min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT})
    study, server, thread = serve(folder, model_url)
    try:
        answers = record_answers(page)
        session_id = start_writing(page, f"http://127.0.0.1:{server.port}")
        type_text(page, "The lighthouse keeper counted the ships")
        if paradigm == "writing":
            page.keyboard.press("Tab")
            expect(page.get_by_test_id("suggestion").first).to_be_visible()
            page.keyboard.press("Escape")
        else:
            expect(page.get_by_test_id("suggestion-ghost")).to_be_visible(timeout=10_000)
            expect(page.get_by_test_id("status-bar")).to_contain_text("Suggestion: active")
            page.keyboard.press("Tab")
        wait_saved(page)
        page.reload()  # the state answer a reloading editor reads
        expect(page.get_by_test_id("editor")).to_be_editable()
        finish_writing(page)
        evaluate_and_survey(page)
        page.reload()
        check(answers, unblinding(study, "deterministic"))
        assert any("/proactive" in url or "/suggestions" in url for url, _ in answers)
        engine = make_engine(study.database_url)
        with reading(engine) as connection:
            records = event_store.records(connection, session_id)
        engine.dispose()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    if paradigm != "writing":  # the researcher's log still names it: the server fills it in
        assert {r["proactive"]["paradigm"] for r in records} == {paradigm}
        opened = [r["proactive"] for r in records if r["eventName"] == "suggestion-open"]
        assert opened and all(o["strategy"] in ("L1", "L2") for o in opened)


def test_no_chat_page_or_answer_names_the_assistant(page, tmp_path, model_url):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    study, server, thread = serve(folder, model_url)
    try:
        answers = record_answers(page)
        url = f"http://127.0.0.1:{server.port}"
        start_chat(page, url)
        for n in range(1, 9):
            exchange(page, f"Here is my thought number {n}.", n)
            if n in (3, 6):
                rate(page, 7)
        page.reload()
        expect(page.get_by_test_id("exchange-count")).to_have_text("8 of 8 exchanges")
        page.get_by_test_id("finish").click()
        page.wait_for_url("**/survey")
        check(answers, unblinding(study, "deterministic"))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
