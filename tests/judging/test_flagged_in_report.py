"""A judge the gold check flagged, as `study report` tells it: with exclude_failed_gold (the
default) their ratings leave the figures and the report says so; with exclude_failed_gold =
false they stay in every figure, and the report must not tell its reader they were left out."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import create_tables, make_engine
from tests.conftest import CONTACT
from tests.judging.finished import finish_sessions, set_section
from tests.plan.conftest import PLAN, edit

GOLD = {"The morning light spilled gently across the quiet harbor.": 5, "asdf qwer zxcv.": 1}
TEXTS = ["The river forgot its name one spring.", "Cities should plant more trees on every street.",
         "The lighthouse keeper counted ships all night.", "Schools should start an hour later."]  # fmt: skip


def judge(client, code: str, score_of) -> None:
    entered = client.get("/judge", query_string={"access_code": code})
    assert entered.status_code == 302, entered.get_data(as_text=True)
    task_id = entered.location.rsplit("/", 1)[-1]
    page = client.get(entered.location).get_data(as_text=True)
    shown = re.findall(r'data-item="([0-9a-f]+)".*?<blockquote class="judging-text">(.*?)</blockquote>', page, re.S)
    ratings = [{"item": item, "score": score_of(unescape(text))} for item, text in shown]
    assert client.post(f"/api/judging/{task_id}/ratings", json={"ratings": ratings}).status_code == 200
    assert client.post(f"/api/judging/{task_id}/ratings", json={"submit": True}).status_code == 200


def judged(tmp_path, exclude_failed_gold: bool):
    """A preregistered study of four texts in two arms, rated by two careful judges and one who
    answers the gold items backwards; returns the report's text."""
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    (folder / "gold.jsonl").write_text("".join(json.dumps({"text": t, "score": s}) + "\n" for t, s in GOLD.items()))
    plan = {**PLAN, "comparisons": [{"name": "H2", "outcome": "quality", "treatment": "creative-high",
                                     "control": "creative-low"}]}  # fmt: skip
    edit(folder, lambda data: data.update(plan=plan))
    set_section(folder, "judging", {"unit": "document", "k": 2, "items_per_task": 4, "gold": "gold.jsonl",
                                    "exclude_failed_gold": exclude_failed_gold})  # fmt: skip
    runner = CliRunner()
    assert runner.invoke(main, ["preregister", str(folder)]).exit_code == 0
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    engine.dispose()
    assert runner.invoke(main, ["judging", "build", str(folder)]).exit_code == 0
    client = create_app(study, suggestion_engine=object()).test_client()
    judge(client, "careful", lambda text: GOLD.get(text, 4))
    judge(client, "careless", lambda text: 6 - GOLD.get(text, 3))  # both gold items 4 points off
    client.application.extensions["study.engine"].dispose()
    status = runner.invoke(main, ["judging", "status", str(folder)])
    assert "flagged by gold 1" in status.output, status.output
    out = tmp_path / "report.html"
    written = runner.invoke(main, ["report", str(folder), "--out", str(out)])
    assert written.exit_code == 0, written.output
    text = unescape(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8")))
    return re.sub(r"\s+", " ", text), status.output


def test_a_flagged_judge_left_out_is_said_to_be(tmp_path):
    report, status = judged(tmp_path, exclude_failed_gold=True)
    assert "Ratings kept: 4 of 8" in status
    assert "4 ratings kept from 2 judges; 1 judge(s) failed the gold items and their ratings are left out." in report
    assert "judges flagged by gold (their ratings left out) 1 judge(s)" in report


def test_a_flagged_judge_kept_is_not_said_to_be_left_out(tmp_path):
    report, status = judged(tmp_path, exclude_failed_gold=False)
    assert "Ratings kept: 8 of 8" in status
    assert ("8 ratings kept from 2 judges; 1 judge(s) failed the gold items and their ratings are kept in "
            "these figures ([judging] exclude_failed_gold = false") in report
    assert "judges flagged by gold (their ratings left out)" not in report  # the planned comparisons' deviations
    assert "their ratings are left out" not in report


def test_preregister_verify_lists_the_flagged_judge_the_report_leaves_out(tmp_path):
    judged(tmp_path, exclude_failed_gold=True)
    verified = CliRunner().invoke(main, ["preregister", "verify", str(tmp_path / "study")])
    assert verified.exit_code == 0, verified.output
    assert "DEVIATION (excluded) judges flagged by gold (their ratings left out): 1 judge(s)" in verified.output
    assert "No deviation from the record." not in verified.output
