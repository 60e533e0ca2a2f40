"""A slider of more points than a likert scale may have (a 0-100 rating) in `study report`: its
answers per condition as a mean, median and range, not one column per point (101 of them, nearly
all 0) and a bar per point."""

from __future__ import annotations

from study import config
from study.server import create_app
from tests.report.surveyed import last_survey_table, surveyed
from tests.server.study_edits import edit_arms

EFFORT = """
[[surveys]]
name = "effort"
placement = "after_session"
[[surveys.items]]
id = "effort"
type = "slider"
text = "How much effort did the writing take?"
min = 0
max = 100
required = false
"""


def test_a_0_to_100_slider_is_summarised_per_condition(study_folder, tmp_path):
    edit_arms(study_folder, lambda arms: [arm for arm in arms if arm["name"] != "creative-low"])
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + EFFORT, encoding="utf-8")
    client = create_app(config.load(study_folder), suggestion_engine=object()).test_client()
    surveyed(client, [{"effort": effort} for effort in ["20", "80", ""]])  # the third leaves it unmoved

    table = last_survey_table(study_folder, tmp_path)
    assert table[0] == ["condition", "answers", "mean [95% CI]", "median", "lowest", "highest"]
    assert [row for row in table[1:] if row[1] != "0"] == [["creative-high", "2", "50.00", "50.00", "20", "80"]]
