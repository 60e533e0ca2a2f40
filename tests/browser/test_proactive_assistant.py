"""MindCopilot's L0 as the paper ran it (issue 21, item 1): an assistant panel beside the editor.
The writer asks, the local model answers completely, and the text reaches the document only by
the writer's own paste or typing (or the study's optional Insert at cursor button); chat-send,
chat-receive, copy, paste and every switch between windows and between editor and panel are
logged, the exports validate, and `study curate proactive` counts them for Table 5."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from study.cli import main as study_cli
from study.cli import write_study_files
from study.curation.validate import validate_file
from study.paradigms.proactive.assistant_simulate import press_insert
from study.simulate.editor import CONTROL_KEYS, EditorLog
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import editor_text, export_session, start_writing, type_text, wait_saved
from tests.browser.test_proactive import logged, names
from tests.browser.test_proactive_l0 import ARGUMENTATIVE_HIGH, switch_windows

pytestmark = pytest.mark.browser


@pytest.fixture
def insert_button() -> bool:
    return True


def panel_study(folder: Path, insert_button: bool) -> Path:
    """The writer (first prompt, creative) gets an L0 condition, run as the assistant panel; one
    argumentative condition is L1, so the study is a MindCopilot one."""
    panel = f'\n[proactive]\nl0 = "assistant"\ninsert_button = {str(insert_button).lower()}\n\n[texts]'
    write_study_files(folder, replacements={
        "min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT, "\n[texts]\nconsent": panel + "\nconsent",
        ARGUMENTATIVE_HIGH: ARGUMENTATIVE_HIGH + 'paradigm = "L1"\n',
    })  # fmt: skip
    return folder


@pytest.fixture
def study_dir(tmp_path: Path, insert_button: bool) -> Path:
    return panel_study(tmp_path / "study", insert_button)


def ask(page, request: str) -> str:
    replies = page.get_by_test_id("assistant-reply")
    before = replies.count()
    page.get_by_test_id("chat-input").click()
    page.get_by_test_id("chat-input").fill(request)
    page.keyboard.press("Enter")
    expect(replies).to_have_count(before + 1, timeout=15_000)
    return replies.last.locator(".assistant-text").text_content()


def copy_reply(page) -> str:
    """Select the last reply's text and copy it with Ctrl+C, as a writer does."""
    page.evaluate("""() => {
        const node = [...document.querySelectorAll('[data-testid=assistant-reply] .assistant-text')].pop();
        const range = document.createRange();
        range.selectNodeContents(node);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
    }""")
    page.keyboard.press("Control+c")
    return page.evaluate("() => window.getSelection().toString()")


def paste_into_editor(page, text: str) -> None:
    """What Ctrl+V does in the textarea: a paste event with the text, then its input. (Headless
    Chromium's clipboard is not shared with the page, so the two are dispatched.)"""
    page.get_by_test_id("editor").click()
    page.keyboard.press("End")
    page.evaluate("""(text) => {
        const editor = document.querySelector('[data-testid=editor]');
        const data = new DataTransfer();
        data.setData('text/plain', text);
        editor.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        document.execCommand('insertText', false, text);
    }""", text)  # fmt: skip


def test_the_writer_asks_the_panel_and_moves_its_text_themselves(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    expect(page.get_by_test_id("assistant-panel")).to_be_visible()
    type_text(page, " A quiet town")
    page.keyboard.press("Tab")  # no Tab list in the paper's L0
    expect(page.get_by_test_id("suggestion")).to_have_count(0)

    response = ask(page, "Write a sentence about the town at night.")
    assert response.strip()
    assert response.strip() not in editor_text(page)  # the answer alone changes nothing

    copied = copy_reply(page)
    assert copied.strip() == response.strip()
    paste_into_editor(page, " " + copied.strip())
    assert editor_text(page).endswith(f" A quiet town {copied.strip()}")
    switch_windows(page)

    page.get_by_test_id("editor").click()
    page.keyboard.press("End")
    ask(page, "And one more.")
    page.get_by_test_id("assistant-insert").last.click()
    wait_saved(page)

    log = logged(task_server, session_id)
    assert {r["proactive"]["paradigm"] for r in log} == {"L0"}
    assert names(log).count("chat-send") == 2 and names(log).count("chat-receive") == 2
    sent = [r["proactive"]["text"] for r in log if r["eventName"] == "chat-send"]
    assert sent == ["Write a sentence about the town at night.", "And one more."]
    received = [r for r in log if r["eventName"] == "chat-receive"]
    assert received[0]["proactive"]["text"] == response and received[0]["eventSource"] == "api"
    chat_id = received[0]["proactive"]["chatId"]
    (copy,) = [r for r in log if r["eventName"] == "chat-copy"]
    assert copy["proactive"]["chatId"] == chat_id and copy["proactive"]["text"].strip() == response.strip()
    (paste,) = [r for r in log if r["proactive"].get("paste")]
    assert (paste["eventName"], paste["eventSource"], paste["proactive"]["chatId"]) == ("text-insert", "user", chat_id)
    (inserted,) = [r for r in log if r["proactive"].get("insert")]
    assert inserted["eventSource"] == "user" and inserted["proactive"]["chatId"] == received[1]["proactive"]["chatId"]
    assert received[1]["proactive"]["text"] in editor_text(page)
    # Every text-insert is the writer's: no api insert, no suggestion list.
    assert not [r for r in log if r["eventName"] == "text-insert" and r["eventSource"] == "api"]
    assert "suggestion-open" not in names(log)
    panels = [r["proactive"]["panel"] for r in log if r["eventName"] == "panel-focus"]
    assert panels[:4] == ["assistant", "editor", "assistant", "editor"]
    assert names(log).count("window-blur") == 1

    # Both exports validate; the strict one is CoAuthor 2021's vocabulary only.
    out = tmp_path / "extended"
    result = CliRunner().invoke(study_cli, ["export", str(study_dir), "--format", "proactive", "--out", str(out), "--all"])
    assert result.exit_code == 0, result.output
    report = validate_file(out / f"{session_id}.jsonl")
    assert report.format == "coauthor-proactive" and report.ok, [i.render() for i in report.issues]
    strict = export_session(study_dir, tmp_path / "strict", session_id, unfinished=True)
    assert not {"chat-send", "chat-receive", "chat-copy", "panel-focus"} & set(names(strict))
    report = validate_file(tmp_path / "strict" / f"{session_id}.jsonl")
    assert report.ok, [i.render() for i in report.issues]

    # Table 5's L0 row: switches and requests, no acceptance.
    metrics = tmp_path / "metrics"
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(out), "--out", str(metrics)])
    assert result.exit_code == 0, result.output
    with (metrics / "paradigms.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["paradigm"] == "L0" and float(row["window_switches"]) == 1.0
    assert float(row["panel_switches"]) == len(panels) and float(row["chat_requests"]) == 2.0
    assert row["shown"] == "0" and row["acceptance_macro"] == "nan"


@pytest.mark.parametrize("insert_button", [False])
def test_without_the_setting_there_is_no_insert_button(page, task_server, insert_button):
    start_writing(page, task_server.url)
    type_text(page, " A quiet town")
    response = ask(page, "Write a sentence about the town.")
    expect(page.get_by_test_id("assistant-insert")).to_have_count(0)
    assert editor_text(page).endswith(" A quiet town") and response.strip() not in editor_text(page)


def test_a_simulated_writer_logs_insert_at_cursor_as_the_page_does(page, task_server):
    """`study simulate`'s writer has no browser: what it logs of a press of Insert at cursor
    (study.paradigms.proactive.assistant_simulate.press_insert) must be what this page logs,
    or a pilot would exercise a path the writers' pages never take."""
    session_id = start_writing(page, task_server.url)
    type_text(page, " A quiet town")
    ask(page, "Write a sentence about the town at night.")
    before = editor_text(page)
    page.get_by_test_id("assistant-insert").last.click()
    wait_saved(page)

    log = logged(task_server, session_id)
    received = [n for n, r in enumerate(log) if r["eventName"] == "chat-receive"][-1]
    in_browser = log[received + 1 :]
    simulated_log = EditorLog(before, {k: log[received][k] for k in CONTROL_KEYS}, extension="proactive")
    simulated_log.take_unsent()
    press_insert(simulated_log, log[received]["proactive"]["chatId"], log[received]["proactive"]["text"])
    simulated = simulated_log.take_unsent()

    def compared(record: dict) -> dict:
        kept = {k: v for k, v in record.items() if k not in ("eventTimestamp", "seq")}
        return {**kept, "proactive": {k: v for k, v in record["proactive"].items() if k != "paradigm"}}

    assert [compared(r) for r in in_browser] == [compared(r) for r in simulated]
    assert [r["eventName"] for r in in_browser] == ["panel-focus", "text-insert"]
