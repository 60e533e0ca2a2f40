"""What a participant does in the browser, and what a researcher reads afterwards."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from playwright.sync_api import Page, expect

from study.cli import main as study_cli
from study.curation import replay as curation_replay

# The 17 keys of a CoAuthor 2021 record, in the release's order (shared data README).
RELEASE_KEYS = [
    "eventName", "eventSource", "eventTimestamp", "textDelta", "cursorRange", "currentDoc",
    "currentCursor", "currentSuggestions", "currentSuggestionIndex", "currentHoverIndex",
    "currentN", "currentMaxToken", "currentTemperature", "currentTopP",
    "currentPresencePenalty", "currentFrequencyPenalty", "eventNum",
]  # fmt: skip


def start_writing(page: Page, base_url: str, access_code: str = "lab-1") -> str:
    """From /task through consent, instructions and the prompt list to the editor.
    Returns the session id."""
    past_instructions(page, base_url, access_code)
    page.wait_for_url("**/prompt")
    page.get_by_test_id("prompt-option").first.click()
    page.wait_for_url("**/writing")
    expect(page.get_by_test_id("editor")).to_be_editable()
    return page.url.rstrip("/").split("/")[-2]


def consent_to_editor(page: Page) -> str:
    """From the consent page on screen (MTurk's or Prolific's way in, a next part) through the
    instructions and the prompt list to the editor. Returns the session id."""
    page.get_by_test_id("consent").check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/instructions")
    page.get_by_test_id("next").click()
    page.wait_for_url("**/prompt")
    page.get_by_test_id("prompt-option").first.click()
    page.wait_for_url("**/writing")
    expect(page.get_by_test_id("editor")).to_be_editable()
    return page.url.rstrip("/").split("/")[-2]


def past_instructions(page: Page, base_url: str, access_code: str = "lab-1") -> None:
    """From /task through consent and instructions, to whatever page comes next."""
    to_instructions(page, base_url, access_code)
    page.get_by_test_id("next").click()


def to_instructions(page: Page, base_url: str, access_code: str, *, query: str | None = None) -> None:
    """From /task through consent, to the instructions (a chat study's ask for confirmations);
    `query`: the task link's own (MTurk's workerId, assignmentId, ...) instead of the code."""
    page.goto(f"{base_url}/task?{query or 'access_code=' + access_code}")
    page.get_by_test_id("consent").check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/instructions")


def type_text(page: Page, text: str) -> None:
    page.keyboard.type(text, delay=0)


def editor_text(page: Page) -> str:
    return page.get_by_test_id("editor").input_value()


def wait_saved(page: Page, timeout: float = 15_000) -> None:
    """Until the server has acknowledged every event (the footer says so)."""
    expect(page.get_by_test_id("save-state")).to_have_text("All changes saved", timeout=timeout)


def finish_writing(page: Page) -> None:
    finish = page.get_by_test_id("finish")
    expect(finish).to_be_enabled(timeout=15_000)
    finish.click()
    page.wait_for_url("**/evaluation")


def evaluate_and_survey(page: Page) -> str:
    """Self-evaluation and survey; returns the verification code shown at the end."""
    for box in page.get_by_test_id("self-evaluation").all():
        box.check()
    page.get_by_test_id("next").click()
    page.wait_for_url("**/survey")
    for _ in range(5):  # a page per survey after the session (a MindCopilot study has two)
        for question in page.locator("fieldset[data-question]").all():
            radios = question.locator("input[type=radio]")
            if radios.count():
                radios.last.check()
            else:
                question.locator("textarea").fill("The suggestions were fun.")
        with page.expect_navigation():
            page.get_by_test_id("next").click()
        if page.url.endswith("/complete"):
            break
    page.wait_for_url("**/complete")
    code = page.get_by_test_id("verification-code")
    expect(code).not_to_be_empty()
    return code.inner_text().strip()


def export_session(study_dir: Path, out: Path, session_id: str, *, unfinished: bool = False) -> list[dict]:
    """`study export` and the session's exported log (one dict per line)."""
    args = ["export", str(study_dir), "--out", str(out)] + (["--all"] if unfinished else [])
    result = CliRunner().invoke(study_cli, args)
    assert result.exit_code == 0, result.output
    lines = (out / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def replay(log: list[dict]) -> str:
    return curation_replay.replay(log).text


def check_release_format(log: list[dict]) -> None:
    """What every exported session must satisfy, whatever happened while writing."""
    assert [list(record) for record in log] == [RELEASE_KEYS] * len(log)
    assert [record["eventNum"] for record in log] == list(range(len(log)))
    assert log[0]["eventName"] == "system-initialize" and log[0]["eventSource"] == "api"
    assert [r["eventName"] for r in log].count("system-initialize") == 1
    assert all(r["currentDoc"] == "" for r in log[1:])
    for record in log:
        name = record["eventName"]
        assert (record["textDelta"] != "") == name.startswith("text-"), record
        assert (record["cursorRange"] != "") == name.startswith("cursor-"), record
        assert (record["currentSuggestions"] != []) == (name == "suggestion-open"), record
        assert isinstance(record["eventTimestamp"], int)
        assert all(isinstance(record[key], str) for key in RELEASE_KEYS[10:16])
