"""`study simulate` answers a writing study's surveys as a person would from the page: a slider
once moved, a text with its word minimum, a follow-up question its answer reveals."""

from __future__ import annotations

import json

from click.testing import CliRunner

from study import config
from study.cli import main
from study.store import make_engine, reading
from study.store import surveys as survey_store
from study.store import sessions as session_store

SURVEYS = """
[[surveys]]
name = "background"
placement = "before_writing"
[[surveys.items]]
id = "confidence"
type = "slider"
text = "How confident are you as a writer?"
min = 1
max = 10
[[surveys.items]]
id = "habits"
type = "text"
text = "How do you usually write?"
min_words = 12
"""


def test_a_writing_study_whose_survey_has_a_slider_and_a_word_minimum_is_piloted_to_the_end(
    pilot_folder, suggestion_model
):
    # A page a person answers by moving the slider and writing enough words: the simulator used
    # to send neither, and every writer stopped at the survey ("Move the slider to give a rating").
    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + SURVEYS, encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 simulated session(s) finished, 0 stopped" in result.output

    engine = make_engine(config.load(pilot_folder).database_url)
    with reading(engine) as connection:
        (session,) = session_store.all_sessions(connection)
        background = survey_store.get(connection, session["session_id"], "background")
    engine.dispose()
    assert session["stage"] == "complete" and session["verification_code"]
    assert background["submitted_at"] and 1 <= background["answers"]["confidence"] <= 10
    assert len(background["answers"]["habits"].split()) >= 12
    assert "confidence" in json.loads(session["survey"])
