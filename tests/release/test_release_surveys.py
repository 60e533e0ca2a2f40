"""Answers to the survey engine's surveys reach a release redacted, like the post-session ones."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner

from study import config
from study.release.cli import release
from study.release.keys import init_keyfile
from study.server import create_app
from tests.conftest import COAUTHOR
from tests.release.conftest import EMAIL, PHONE, PHONE_INTL, SMALLEST
from tests.release.inject import Writer
from tests.release.test_build_study import take_part
from tests.review.sessions import confirm_by_sync
from tests.server.flow import to_writing

EXTRA = """
[[surveys]]
preset = "mindcopilot-q1-q10"
name = "mindcopilot"
placement = "after_session"
"""


def _release_with_feedback(study_folder, tmp_path, feedback: str):
    """A release of one session whose engine survey's free-text answer is `feedback`; returns
    the release's survey.csv row and the curator's redaction report rows."""
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    client = create_app(config.load(study_folder), suggestion_engine=object()).test_client()
    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]
    mturk = {"workerId": "A2SURVEYWORKER9", "assignmentId": "3ASSIGN2", "hitId": "3HIT2",
             "turkSubmitTo": "https://workersandbox.mturk.com"}  # fmt: skip
    session_id = client.get("/task", query_string=mturk).location.split("/")[2]
    to_writing(client, session_id, prompt="audiobook")
    take_part(client, session_id, Writer(events).events)
    answers = dict.fromkeys(
        ["q1_mental_demand", "q2_effort", "q3_temporal_demand", "q4_frustration", "q5_intent_alignment",
         "q6_decision_facilitation", "q7_style_understanding", "q8_alignment_over_time", "q9_timing",
         "q10_sense_of_control"], "5")  # fmt: skip
    answers.update(mindcopilot_feedback=feedback)
    assert client.post(f"/s/{session_id}/survey", data=answers).location.endswith("/complete")
    confirm_by_sync(client.application.extensions["study.engine"], "A2SURVEYWORKER9", "3ASSIGN2")

    key = init_keyfile(tmp_path / "study.key")
    out = tmp_path / "releases"
    result = CliRunner().invoke(release, ["build", str(study_folder), "--version", "1.0.0", "--out", str(out),
                                          "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    with open(out / "coauthor-1.0.0" / "survey.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    with open(key.companion(".redactions") / "coauthor-1.0.0.csv", newline="") as handle:
        report = list(csv.DictReader(handle))
    return row, report


def test_engine_survey_free_text_is_redacted_in_the_release(study_folder, tmp_path):
    row, _ = _release_with_feedback(study_folder, tmp_path, f"Reach me at {EMAIL} or {PHONE}.")
    assert row["q3_temporal_demand"] == "5"
    assert EMAIL not in row["mindcopilot_feedback"] and "555-2671" not in row["mindcopilot_feedback"]
    assert row["mindcopilot_feedback"].startswith("Reach me at <EMAIL")


def test_an_answer_a_spreadsheet_would_run_stays_exact_in_the_release_and_is_text_in_the_report(study_folder, tmp_path):
    # The release is data: the participant's words as written (only redacted), even the ones a
    # spreadsheet would run. The curator's report is read in a spreadsheet and by no command:
    # there the found number is text, not the formula "+1 617 555 0199".
    row, report = _release_with_feedback(study_folder, tmp_path, f"=1+1 is how it felt. Call {PHONE_INTL}")
    assert row["mindcopilot_feedback"].startswith("=1+1 is how it felt. Call <PHONE"), row
    (found,) = [r for r in report if PHONE_INTL in r["original"]]
    assert found["original"] == "'" + PHONE_INTL, found
