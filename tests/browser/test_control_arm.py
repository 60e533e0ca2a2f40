"""A control arm in the browser: a writer assigned to the no-assistant condition goes through
the same path (consent, instructions, editor, timer, log, surveys, completion) with no
suggestion control on the page; Tab asks nothing; the study's export keeps the arm, and its
report says its suggestion figures are not applicable."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from sqlalchemy import select

from study.cli import main as study_cli
from study.cli import write_study_files
from study.store import make_engine, reading
from study.store.db import suggestion_requests
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import (
    check_release_format,
    evaluate_and_survey,
    export_session,
    finish_writing,
    replay,
    start_writing,
    type_text,
    wait_saved,
)
from tests.server.test_control_arm import CONTROL, CREATIVE_LOW

pytestmark = pytest.mark.browser


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    # The first creative session gets the genre's first condition: here the control arm.
    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        "min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT, CREATIVE_LOW: CONTROL,
    })  # fmt: skip
    return folder


def test_a_control_writer_writes_without_an_assistant_and_the_report_says_not_applicable(
    page, task_server, study_dir, tmp_path
):
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/suggestions" in r.url or "/proactive" in r.url else None)
    session_id = start_writing(page, task_server.url)
    expect(page.get_by_test_id("no-assistant")).to_contain_text("no AI assistant in this session")
    assert page.locator("#suggestions").count() == 0 and page.get_by_test_id("spinner").count() == 0

    type_text(page, " The lighthouse keeper")
    page.keyboard.press("Tab")  # claimed, as in every arm, but asks nothing
    type_text(page, " counted ships.")
    expect(page.get_by_test_id("editor")).to_be_focused()
    wait_saved(page)
    finish_writing(page)
    assert page.get_by_test_id("self-evaluation").count() == 1  # not "I wrote it with AI"
    assert evaluate_and_survey(page)

    assert asked == []
    engine = make_engine(task_server.study.database_url)
    with reading(engine) as connection:
        assert connection.execute(select(suggestion_requests)).first() is None
    engine.dispose()

    log = export_session(study_dir, tmp_path / "export", session_id)
    check_release_format(log)
    assert replay(log).endswith("The lighthouse keeper counted ships.\n")
    assert not any(r["eventName"].startswith("suggestion-") for r in log)
    assert {r["currentN"] for r in log} == {""}  # no generation settings: no model
    with open(tmp_path / "export" / "metadata.csv", newline="") as handle:
        row = next(csv.DictReader(handle))
    assert (row["condition"], row["paradigm"], row["num_query"], row["perc_selected"]) == (
        "creative-control", "none", "", "")

    report = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_dir), "--out", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text(encoding="utf-8")
    suggestions = html.split('<section id="suggestions">')[1].split("</section>")[0]
    assert "<td>creative-control</td><td>not applicable</td>" in suggestions
    collaboration = html.split('<section id="collaboration">')[1].split("</section>")[0]
    row = collaboration.split("<td>creative-control</td>")[1].split("</tr>")[0]
    assert "<td>not applicable</td>" in row
    # CoAuthor's Table 3 is over sessions with an assistant: with only a control session, none.
    assert '<section id="table3">' not in html
