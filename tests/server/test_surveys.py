"""Surveys on the participant's path: before writing, after each session, once at the end,
page by page; answers stored per session, exported and counted by `study status`."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.server import create_app
from study.store import reading
from study.store import sessions as session_store
from study.store import surveys as survey_store
from tests.server.flow import post_init, start

EXTRA = """
[[surveys]]
name = "background"
placement = "before_writing"
title = "About you"
[[surveys.items]]
id = "writes_often"
type = "single"
text = "Do you write often?"
options = ["Yes", "No"]
[[surveys.items]]
id = "what_you_write"
type = "text"
text = "What do you write?"
show_if = { item = "writes_often", equals = "Yes" }
[[surveys.items]]
id = "languages"
type = "multiple"
text = "Which languages do you write in?"
options = ["English", "Spanish", "Other"]
page = 2

[[surveys]]
preset = "mindcopilot-q1-q10"
name = "mindcopilot"
placement = "after_session"

[[surveys]]
name = "goodbye"
placement = "end_of_study"
[[surveys.items]]
id = "last_words"
type = "text"
text = "Anything else about the whole study?"
min_words = 2
"""
Q1_Q10 = {f"q{n}_{name}": str(n % 7 + 1) for n, name in enumerate(
    ["mental_demand", "effort", "temporal_demand", "frustration", "intent_alignment",
     "decision_facilitation", "style_understanding", "alignment_over_time", "timing",
     "sense_of_control"], start=1)}  # fmt: skip


@pytest.fixture
def surveyed(study_folder):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    app = create_app(config.load(study_folder), suggestion_engine=object())
    return app, app.test_client()


def _through_presurvey(client, session_id):
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    response = client.post(f"/s/{session_id}/instructions")
    assert response.location == f"/s/{session_id}/presurvey"
    return client.get(f"/s/{session_id}/presurvey").data.decode()


def _to_survey(client, session_id):
    response = client.post(f"/s/{session_id}/prompt", data={"prompt": "pig"})
    assert response.location.endswith("/writing")
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "x"})
    client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"})


def test_a_before_writing_survey_comes_page_by_page_and_survives_a_reload(surveyed):
    app, client = surveyed
    session_id = start(client)
    page = _through_presurvey(client, session_id)
    assert "About you" in page and "Page 1 of 2" in page
    # show_if on the same page: the follow-up starts hidden, and an answer it hides is dropped.
    assert 'data-question="what_you_write"' in page and "data-show-if=" in page
    response = client.post(f"/s/{session_id}/presurvey", data={"writes_often": "Yes"})
    assert "This question needs an answer." in response.data.decode()
    response = client.post(f"/s/{session_id}/presurvey", data={"writes_often": "Yes", "what_you_write": "Poems"})
    assert response.location == f"/s/{session_id}/presurvey"
    page = client.get(f"/s/{session_id}/presurvey").data.decode()  # a reload: page 2, page 1 kept
    assert "Page 2 of 2" in page and "Which languages" in page
    stale = {"_survey": "background", "_page": "1", "writes_often": "No"}  # page 1 again, from another tab
    assert client.post(f"/s/{session_id}/presurvey", data=stale).location == f"/s/{session_id}/presurvey"
    response = client.post(f"/s/{session_id}/presurvey", data={"languages": ["English", "Other"]})
    assert response.location == f"/s/{session_id}/prompt"
    with reading(app.extensions["study.engine"]) as connection:
        row = survey_store.get(connection, session_id, "background")
    assert row["answers"] == {"writes_often": "Yes", "what_you_write": "Poems", "languages": ["English", "Other"]}
    assert row["submitted_at"] is not None and row["placement"] == "before_writing"


def test_after_session_surveys_then_the_end_of_study_survey_once_per_participant(surveyed, study_folder, tmp_path):
    app, client = surveyed
    codes = []
    for round_ in range(2):
        session_id = start(client, access_code="same-writer", **({"another": "1"} if round_ else {}))
        _through_presurvey(client, session_id)
        client.post(f"/s/{session_id}/presurvey", data={"writes_often": "No"})
        client.post(f"/s/{session_id}/presurvey", data={"languages": "Spanish"})
        _to_survey(client, session_id)
        legacy = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
        assert client.post(f"/s/{session_id}/survey", data=legacy).location == f"/s/{session_id}/survey"
        page = client.get(f"/s/{session_id}/survey").data.decode()
        assert "How was writing in this setting?" in page and "Lightly Bad" in page
        response = client.post(f"/s/{session_id}/survey", data=Q1_Q10)
        if round_ == 0:
            assert response.location == f"/s/{session_id}/survey"
            assert "Anything else about the whole study?" in client.get(response.location).data.decode()
            response = client.post(f"/s/{session_id}/survey", data={"last_words": "Thanks, bye"})
        # The second session of the same writer skips the end-of-study survey.
        assert response.location == f"/s/{session_id}/complete"
        codes.append(session_id)
    with reading(app.extensions["study.engine"]) as connection:
        first = session_store.get(connection, codes[0])
        second = survey_store.for_session(connection, codes[1])
    stored = json.loads(first["survey"])
    assert stored["ownership"] == 6 and stored["q1_mental_demand"] == 2 and stored["last_words"] == "Thanks, bye"
    assert stored["languages"] == ["Spanish"]
    assert [row["survey"] for row in second] == ["background", "post_session", "mindcopilot"]

    out = tmp_path / "export"
    assert CliRunner().invoke(study_cli, ["export", str(study_folder), "--out", str(out)]).exit_code == 0
    rows = {r["session_id"]: r for r in csv.DictReader((out / "survey.csv").open(encoding="utf-8"))}
    assert rows[codes[0]]["last_words"] == "Thanks, bye" and rows[codes[1]]["last_words"] == ""
    assert rows[codes[0]]["q10_sense_of_control"] == "4" and rows[codes[0]]["languages"] == "Spanish"
    typed = json.loads((out / "surveys.json").read_text(encoding="utf-8"))["responses"]
    assert {(r["session_id"], r["survey"]) for r in typed} >= {(codes[0], "goodbye"), (codes[1], "mindcopilot")}

    status = CliRunner().invoke(study_cli, ["status", str(study_folder)]).output
    assert "Surveys (submitted, in progress): post_session 2, background 2, mindcopilot 2, goodbye 1" in status


def test_the_legacy_survey_still_checks_its_answers(client):
    session_id = start(client)
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    assert client.post(f"/s/{session_id}/instructions").location == f"/s/{session_id}/prompt"
    _to_survey(client, session_id)
    page = client.post(f"/s/{session_id}/survey", data={"ownership": "9"}).data.decode()
    assert "Choose a point from 1 to 7." in page and page.count("This question needs an answer.") == 3


LONG_ANSWER = """
[[surveys]]
name = "story"
placement = "before_writing"
[[surveys.items]]
id = "experience"
type = "text"
text = "Tell us about your writing."
max_chars = 20000
"""


def test_a_long_answer_with_line_breaks_that_fits_its_box_is_taken(study_folder):
    # The box holds max_chars (at most 20,000) and counts a line break as one character, but the
    # form posts it as "\r\n": an answer that fitted the box was refused at the door with
    # "Cannot accept this request: form.experience: must have at most 20000 characters".
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + LONG_ANSWER, encoding="utf-8")
    app = create_app(config.load(study_folder), suggestion_engine=object())
    client = app.test_client()
    session_id = start(client)
    _through_presurvey(client, session_id)
    typed = "Line.\n" * 3300  # 19,800 characters in the box
    response = client.post(f"/s/{session_id}/presurvey", data={"experience": typed.replace("\n", "\r\n")})
    assert response.status_code == 302, response.data.decode()[:300]
    with reading(app.extensions["study.engine"]) as connection:
        row = survey_store.get(connection, session_id, "story")
    assert row["answers"] == {"experience": typed.strip()}
