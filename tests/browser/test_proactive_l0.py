"""L0 (Tab, as CoAuthor) in a MindCopilot study logs window switches (Table 5 compares all
four paradigms); in a plain CoAuthor study the log keeps CoAuthor 2021's vocabulary."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from study.cli import main as study_cli
from study.cli import write_study_files
from study.curation.validate import validate_file
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import (
    export_session,
    start_writing,
    type_text,
    wait_saved,
)
from tests.browser.test_proactive import logged, names

pytestmark = pytest.mark.browser

ARGUMENTATIVE_HIGH = 'name = "argumentative-high"\ngenre = "argumentative"\nmode = "completion"\n'


@pytest.fixture
def with_l1() -> bool:
    return True


@pytest.fixture
def study_dir(tmp_path: Path, with_l1: bool) -> Path:
    # Every condition is L0 (the default) but one argumentative condition, which is L1 when
    # `with_l1`: the writer (first prompt, creative) gets an L0 condition either way.
    folder = tmp_path / "study"
    paradigm = "L1" if with_l1 else "L0"
    write_study_files(folder, replacements={
        "min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT,
        ARGUMENTATIVE_HIGH: ARGUMENTATIVE_HIGH + f'paradigm = "{paradigm}"\n',
    })
    return folder


def switch_windows(page) -> None:
    page.evaluate("window.dispatchEvent(new Event('blur'))")
    page.evaluate("window.dispatchEvent(new Event('focus'))")


def test_l0_in_a_proactive_study_logs_window_switches_and_curation_counts_them(page, task_server, study_dir, tmp_path):
    session_id = start_writing(page, task_server.url)
    type_text(page, " A quiet town")
    switch_windows(page)
    type_text(page, " woke up.")
    switch_windows(page)
    # Tab's list, as CoAuthor: the extended export below validates with all of it (issue 21).
    page.keyboard.press("Tab")
    suggestions = page.get_by_test_id("suggestion")
    expect(suggestions.first).to_be_visible()
    shown = suggestions.count()
    page.keyboard.press("Enter")
    expect(suggestions).to_have_count(0)
    wait_saved(page)
    log = logged(task_server, session_id)
    assert names(log).count("window-blur") == 2 and names(log).count("window-focus") == 2
    assert shown > 1 and [len(r["currentSuggestions"]) for r in log if r["eventName"] == "suggestion-open"] == [shown]
    assert {r["proactive"]["paradigm"] for r in log} == {"L0"}
    assert page.get_by_test_id("status-bar").count() == 0  # no ghost text: Tab, as CoAuthor

    # The extended export keeps them (and validates); the strict CoAuthor one drops them.
    out = tmp_path / "proactive"
    result = CliRunner().invoke(study_cli, ["export", str(study_dir), "--format", "proactive", "--out", str(out), "--all"])
    assert result.exit_code == 0, result.output
    report = validate_file(out / f"{session_id}.jsonl")
    assert report.format == "coauthor-proactive" and report.ok, [i.render() for i in report.issues]
    strict = export_session(study_dir, tmp_path / "strict", session_id, unfinished=True)
    assert not {"window-blur", "window-focus"} & set(names(strict))
    assert all("proactive" not in r for r in strict)

    # `study curate proactive` counts them per session and per paradigm (Table 5).
    metrics = tmp_path / "metrics"
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(out), "--out", str(metrics)])
    assert result.exit_code == 0, result.output
    with (metrics / "paradigms.csv").open() as handle:
        rows = {row["paradigm"]: row for row in csv.DictReader(handle)}
    assert float(rows["L0"]["window_switches"]) == 2.0
    with (metrics / "sessions.csv").open() as handle:
        sessions = list(csv.DictReader(handle))
    assert [(s["session_id"], s["paradigm"], s["window_switches"]) for s in sessions] == [(session_id, "L0", "2")]


@pytest.mark.parametrize("with_l1", [False])
def test_a_plain_coauthor_study_logs_no_window_switches(page, task_server, with_l1):
    session_id = start_writing(page, task_server.url)
    type_text(page, " A quiet town")
    switch_windows(page)
    type_text(page, " woke up.")
    wait_saved(page)
    log = logged(task_server, session_id)
    assert not {"window-blur", "window-focus"} & set(names(log))
    assert all("proactive" not in r for r in log)
