"""The three designs of `study init --design` in the browser, on the local model (issue 27
item 2): Jakesch et al.'s control arm against opinionated assistants (between subjects),
RealHumanEval's no model / autocomplete / chat arms (mixed paradigms, between subjects), and
Dhillon et al.'s Latin square (within subjects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from study.cli import main as study_cli
from study.cli import write_study_files
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import (
    consent_to_editor,
    evaluate_and_survey,
    finish_writing,
    start_writing,
    type_text,
    wait_saved,
)

pytestmark = pytest.mark.browser


def _design(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "study"
    write_study_files(folder, design=name,
                      replacements={"min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT})  # fmt: skip
    return folder


def _conditions(task_server) -> dict[str, str]:
    engine = make_engine(task_server.study.database_url)
    with reading(engine) as connection:
        found = {s["access_code"] + "/" + s["session_id"]: s["condition"] for s in session_store.all_sessions(connection)}
    engine.dispose()
    return found


def _write_and_finish(page, text: str) -> None:
    type_text(page, text)
    wait_saved(page)
    finish_writing(page)
    assert evaluate_and_survey(page)


def _report(study_dir: Path, tmp_path: Path) -> str:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8").split('<section id="arms">')[1].split("</section>")[0]


class TestJakesch:
    @pytest.fixture
    def study_dir(self, tmp_path):
        return _design(tmp_path, "jakesch")

    def test_a_control_arm_against_an_opinionated_assistant(self, page, task_server, study_dir, tmp_path):
        start_writing(page, task_server.url, "jak-1")
        expect(page.get_by_test_id("no-assistant")).to_be_visible()  # the first arm: control
        _write_and_finish(page, " Social media connects people.")

        start_writing(page, task_server.url, "jak-2")
        page.keyboard.press("Tab")  # the second arm's assistant argues one side
        expect(page.locator("#suggestions li").first).to_be_visible()
        page.keyboard.press("Enter")
        type_text(page, " And yet.")
        wait_saved(page)
        finish_writing(page)
        for box in page.get_by_test_id("self-evaluation").all():
            box.check()
        page.get_by_test_id("next").click()
        page.wait_for_url("**/survey")
        assert page.locator('fieldset[data-question="attitude"]').count() == 1  # Jakesch's attitude item
        for question in page.locator("fieldset[data-question]").all():
            radios = question.locator("input[type=radio]")
            if radios.count():
                radios.last.check()
        page.get_by_test_id("next").click()
        page.wait_for_url("**/complete")

        assert sorted(_conditions(task_server).values()) == ["control", "good-for-society"]
        arms = _report(study_dir, tmp_path)
        assert "<td>control</td><td>1</td>" in arms and "<td>good-for-society</td><td>1</td>" in arms
        assert "attitude (survey)" in arms and "good-for-society - control" in arms


class TestRealHumanEval:
    @pytest.fixture
    def study_dir(self, tmp_path):
        return _design(tmp_path, "realhumaneval")

    def test_no_model_autocomplete_and_chat_are_arms_of_one_study(self, page, task_server, study_dir, tmp_path):
        start_writing(page, task_server.url, "rhe-1")
        expect(page.get_by_test_id("no-assistant")).to_be_visible()
        _write_and_finish(page, " On my own.")

        start_writing(page, task_server.url, "rhe-2")
        assert page.get_by_test_id("chat-panel").count() == 0
        type_text(page, " A pause brings ghost text.")
        expect(page.get_by_test_id("suggestion-ghost")).to_be_visible(timeout=15_000)
        page.keyboard.press("Escape")
        wait_saved(page)
        finish_writing(page)
        assert evaluate_and_survey(page)

        chat_session = start_writing(page, task_server.url, "rhe-3")
        expect(page.get_by_test_id("chat-hint")).to_be_visible()
        assert page.locator("#suggestions").count() == 0
        page.get_by_test_id("chat-input").fill("Give me an opening line.")
        page.get_by_test_id("chat-send").click()
        reply = page.locator('#chat-messages li[data-role="assistant"]')
        expect(reply).to_have_count(1)
        reply_text = reply.inner_text()
        assert reply_text.strip()
        page.get_by_test_id("editor").click()
        page.keyboard.press("End")
        # The writer copies the reply into the text: the assistant's text, not the writer's
        # own and not text from outside.
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.evaluate("text => navigator.clipboard.writeText(text)", " " + reply_text)
        page.keyboard.press("Control+V")
        type_text(page, " Inspired, I wrote on.")
        wait_saved(page)
        finish_writing(page)
        assert evaluate_and_survey(page)

        assert sorted(_conditions(task_server).values()) == ["autocomplete", "chat", "no-model"]
        out = tmp_path / "export"
        result = CliRunner().invoke(study_cli, ["export", str(study_dir), "--out", str(out)])
        assert result.exit_code == 0, result.output
        metadata = (out / "metadata.csv").read_text()
        for arm, paradigm in (("no-model", "none"), ("autocomplete", "L1"), ("chat", "chat")):
            assert f",{arm},{paradigm}" in metadata
        # The ghost-text arm also keeps MindCopilot's extended format, and only it is there.
        proactive = (out / "proactive" / "sessions.csv").read_text().splitlines()
        assert len(proactive) == 2 and ",L1,autocomplete," in proactive[1]
        validated = CliRunner().invoke(study_cli, ["curate", "validate", str(out / "proactive")])
        assert validated.exit_code == 0, validated.output
        [conversation] = [json.loads(line) for line in (out / "chat-arm-conversations.jsonl").read_text().splitlines()]
        assert conversation["session_id"] == chat_session and conversation["condition"] == "chat"
        assert [m["role"] for m in conversation["messages"]] == ["user", "assistant"]
        assert conversation["messages"][1]["content"] == reply_text
        arms = _report(study_dir, tmp_path)
        assert all(f"<td>{arm}</td><td>1</td>" in arms for arm in ("autocomplete", "chat", "no-model"))
        html = (tmp_path / "report.html").read_text(encoding="utf-8")
        origin = html.split('<section id="origin">')[1].split("</section>")[0]
        chat_row = origin.split("<td>chat</td>")[1].split("</tr>")[0]
        cells = [c.split("</td>")[0] for c in chat_row.split("<td>")[1:]]
        assert float(cells[2].split()[0]) > 50, cells  # the assistant's share of the final text
        assert cells[3] == "0.00" and cells[4] == "0", cells  # nothing from outside, nothing flagged
        assert "Sessions with text from outside" not in origin


class TestDhillon:
    @pytest.fixture
    def study_dir(self, tmp_path):
        return _design(tmp_path, "dhillon")

    def _next_part(self, page) -> None:
        page.get_by_test_id("next-part").click()
        consent_to_editor(page)

    def test_each_writer_writes_in_every_arm_in_a_latin_square_order(self, page, task_server, study_dir, tmp_path):
        start_writing(page, task_server.url, "dh-1")
        _write_and_finish(page, " Part one.")
        expect(page.get_by_test_id("parts-left")).to_contain_text("2 more parts")
        self._next_part(page)
        _write_and_finish(page, " Part two.")
        expect(page.get_by_test_id("parts-left")).to_contain_text("1 more part ")
        self._next_part(page)
        _write_and_finish(page, " Part three.")
        assert page.get_by_test_id("next-part").count() == 0
        page.goto(f"{task_server.url}/task?access_code=dh-1&another=1")
        # Told at once, with no consent, instructions or prompt to go through first.
        assert page.get_by_test_id("consent").count() == 0
        expect(page.locator("main")).to_contain_text("You have written in every part of this study.")
        assert page.get_by_test_id("prompt-option").count() == 0

        # The second writer starts on the square's next row.
        start_writing(page, task_server.url, "dh-2")
        first_of_second = page.get_by_test_id("no-assistant").count()
        engine = make_engine(task_server.study.database_url)
        with reading(engine) as connection:
            rows = [s for s in session_store.all_sessions(connection) if s["condition"]]
        engine.dispose()
        assert [s["condition"] for s in rows if s["access_code"] == "dh-1"] == ["no-ai", "next-sentence", "next-paragraph"]
        assert [s["condition"] for s in rows if s["access_code"] == "dh-2"] == ["next-sentence"]
        assert first_of_second == 0  # an arm with an assistant: no "on your own" footer
