"""A multiple-choice question in `study report`: how many sessions ticked each option, per
condition, as a single choice's counts are given, not only how many answered (an answer of
several options is one cell of survey.csv, its options joined with "; ")."""

from __future__ import annotations

from study import config
from study.server import create_app
from tests.report.surveyed import last_survey_table, surveyed

FEATURES = """
[[surveys]]
name = "features"
placement = "after_session"
[[surveys.items]]
id = "used"
type = "multiple"
text = "Which features did you use?"
options = ["Suggestions", "Undo; redo", "Prompt"]
required = false
"""


def test_each_option_of_a_multiple_choice_is_counted_per_condition(study_folder, tmp_path):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + FEATURES, encoding="utf-8")
    client = create_app(config.load(study_folder), suggestion_engine=object()).test_client()
    # Three writers: two options, one option (itself holding "; "), and none (it is optional).
    surveyed(client, [{"used": ticked} for ticked in [["Suggestions", "Prompt"], ["Undo; redo"], []]])

    table = last_survey_table(study_folder, tmp_path)
    assert table[0] == ["condition", "answers", "Suggestions", "Undo; redo", "Prompt"]
    # Summed over the conditions the writers were assigned: 2 answered, each option ticked once.
    assert [sum(int(row[k]) for row in table[1:]) for k in range(1, 5)] == [2, 1, 1, 1]
