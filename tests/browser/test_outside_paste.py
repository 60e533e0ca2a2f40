"""Text from outside the study in the browser ([session] outside_paste, issue 27 item 6).

"refuse": a paste of text the page never held is stopped and the writer is told why, while a
paste of text copied inside the editor goes in. "flag": the paste goes in, and the session
says so: its origin (study.curation.origin) counts the text as outside, marked as coming right
after the window regained focus, the review proposal carries the flag, and the report shows
the outside share per condition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from study.cli import main as study_cli
from study.cli import write_study_files
from study.curation.origin import origin
from study.review.evidence import outside_text_flags
from study.store import events as event_store
from study.store import make_engine, reading
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import (
    editor_text,
    evaluate_and_survey,
    finish_writing,
    start_writing,
    type_text,
    wait_saved,
)

pytestmark = pytest.mark.browser

OUTSIDE = "Lighthouses were once lit by whale oil and later by kerosene lamps."


def _study(tmp_path: Path, mode: str) -> Path:
    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        "min_seconds = 600": f'min_seconds = {MIN_SECONDS}\noutside_paste = "{mode}"', **CONTACT,
    })  # fmt: skip
    return folder


def _clipboard(page, text: str) -> None:
    """Put `text` on the system clipboard, as another application would."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate("text => navigator.clipboard.writeText(text)", text)


def _stored(task_server, session_id: str) -> list[dict]:
    engine = make_engine(task_server.study.database_url)
    with reading(engine) as connection:
        records = event_store.records(connection, session_id)
    engine.dispose()
    return records


class TestRefuse:
    @pytest.fixture
    def study_dir(self, tmp_path):
        return _study(tmp_path, "refuse")

    def test_a_paste_from_outside_is_refused_and_a_copy_inside_the_editor_is_not(self, page, task_server):
        session_id = start_writing(page, task_server.url)
        editor = page.get_by_test_id("editor")
        type_text(page, " The keeper climbed the stairs every night.")
        before = editor_text(page)
        _clipboard(page, OUTSIDE)
        editor.focus()
        page.keyboard.press("Control+V")
        expect(page.get_by_test_id("status")).to_contain_text("Pasting text from outside this page is turned off")
        assert editor_text(page) == before

        # Copying the writer's own sentence inside the editor and pasting it is writing.
        own = " The keeper climbed the stairs every night."
        start = before.index(own)
        editor.evaluate("(el, [a, b]) => el.setSelectionRange(a, b)", [start, start + len(own)])
        page.keyboard.press("Control+C")
        page.keyboard.press("End")
        page.keyboard.press("Control+V")
        expect(editor).to_have_value(before + own)
        wait_saved(page)
        found = origin(_stored(task_server, session_id))
        assert not found.flagged and found.outside == 0 and found.typed == 2 * len(own)


    def test_a_copy_of_the_writers_sentence_pasted_after_editing_that_sentence_is_their_own(self, page, task_server):
        # Copy a sentence, change a word of it in place, then paste the copy further on: the
        # page lets it in (it was copied inside the editor), and the log must read it so too.
        session_id = start_writing(page, task_server.url)
        editor = page.get_by_test_id("editor")
        own = " The keeper climbed the stairs every night."
        type_text(page, own)
        before = editor_text(page)
        start = before.index(own)
        editor.evaluate("(el, [a, b]) => el.setSelectionRange(a, b)", [start, start + len(own)])
        page.keyboard.press("Control+C")
        at = start + len(" The")
        editor.evaluate("(el, at) => el.setSelectionRange(at, at)", at)
        type_text(page, " old")
        page.keyboard.press("Control+End")
        page.keyboard.press("Control+V")
        expect(editor).to_have_value(before[:at] + " old" + before[at:] + own)
        assert "turned off" not in page.get_by_test_id("status").inner_text()
        wait_saved(page)
        found = origin(_stored(task_server, session_id))
        assert not found.flagged, [i.describe() for i in found.inserts]
        assert found.outside == 0 and found.typed == 2 * len(own) + len(" old")


class TestFlag:
    @pytest.fixture
    def study_dir(self, tmp_path):
        return _study(tmp_path, "flag")

    def test_a_paste_from_outside_goes_in_and_is_flagged_in_review_and_report(self, page, task_server, study_dir, tmp_path):
        session_id = start_writing(page, task_server.url)
        editor = page.get_by_test_id("editor")
        type_text(page, " Notes:")
        _clipboard(page, OUTSIDE)
        # The writer leaves the window (to copy from elsewhere) and comes back to paste.
        page.evaluate("window.dispatchEvent(new Event('blur')); window.dispatchEvent(new Event('focus'))")
        editor.focus()
        page.keyboard.press("Control+V")
        expect(editor).to_have_value(f"{editor_text(page).split(' Notes:')[0]} Notes:{OUTSIDE}")
        assert page.get_by_test_id("status").inner_text() == ""
        wait_saved(page)
        finish_writing(page)
        assert evaluate_and_survey(page)

        records = _stored(task_server, session_id)
        assert [r["eventName"] for r in records].count("window-blur") >= 1
        found = origin(records)
        [insert] = found.inserts
        assert insert.chars == len(OUTSIDE) and insert.after_window_switch
        assert found.share("outside") == pytest.approx(100 * len(OUTSIDE) / (len(OUTSIDE) + len(" Notes:")))
        [flag] = outside_text_flags(records)
        assert "right after the window regained focus" in flag and f"{len(OUTSIDE)} characters" in flag

        report = tmp_path / "report.html"
        result = CliRunner().invoke(study_cli, ["report", str(study_dir), "--out", str(report)])
        assert result.exit_code == 0, result.output
        section = report.read_text(encoding="utf-8").split('<section id="origin">')[1].split("</section>")[0]
        assert f"Sessions with text from outside: {session_id}." in section


class TestRefuseBesideAnAssistantPanel:
    """L0's assistant panel ([proactive] l0 = "assistant"): its responses are text the page
    shows the writer to paste, as a chat arm's replies are."""

    @pytest.fixture
    def study_dir(self, tmp_path):
        from tests.browser.test_proactive_l0 import ARGUMENTATIVE_HIGH

        folder = tmp_path / "study"
        panel = '\n[proactive]\nl0 = "assistant"\n\n[texts]'
        write_study_files(folder, replacements={
            "min_seconds = 600": f'min_seconds = {MIN_SECONDS}\noutside_paste = "refuse"', **CONTACT,
            "\n[texts]\nconsent": panel + "\nconsent", ARGUMENTATIVE_HIGH: ARGUMENTATIVE_HIGH + 'paradigm = "L1"\n',
        })  # fmt: skip
        return folder

    def test_a_response_of_the_assistant_panel_may_be_pasted(self, page, task_server):
        from tests.browser.test_proactive_assistant import ask, copy_reply

        session_id = start_writing(page, task_server.url)
        type_text(page, " A quiet town.")
        response = ask(page, "Write a sentence about the town at night.")
        assert len(response.strip()) >= 20
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        copied = copy_reply(page).strip()
        editor = page.get_by_test_id("editor")
        editor.focus()
        page.keyboard.press("End")
        page.keyboard.press("Control+V")
        expect(page.get_by_test_id("status")).not_to_contain_text("Pasting text from outside this page is turned off")
        expect(editor).to_have_value(re.compile(re.escape(" A quiet town.") + r"\s*" + re.escape(copied) + "$"))
        wait_saved(page)
        found = origin(_stored(task_server, session_id))
        assert not found.flagged and found.assistant == len(copied)

    def test_a_refused_paste_does_not_mark_the_next_keystroke_as_a_paste(self, page, task_server):
        session_id = start_writing(page, task_server.url)
        type_text(page, " A quiet town.")
        _clipboard(page, OUTSIDE)
        editor = page.get_by_test_id("editor")
        editor.focus()
        page.keyboard.press("End")
        page.keyboard.press("Control+V")
        expect(page.get_by_test_id("status")).to_contain_text("Pasting text from outside this page is turned off")
        type_text(page, "Z")
        wait_saved(page)
        [keystroke] = [r for r in _stored(task_server, session_id)
                       if r["eventName"] == "text-insert" and r["textDelta"]["ops"][-1].get("insert") == "Z"]  # fmt: skip
        assert not keystroke["proactive"].get("paste"), keystroke["proactive"]
