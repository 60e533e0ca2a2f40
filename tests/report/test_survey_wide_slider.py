"""A slider of more points than a likert scale may have (a 0-100 rating) in `study report`: its
answers per condition as a mean, median and range, not one column per point (101 of them, nearly
all 0) and a bar per point."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.server import create_app
from tests.report.conftest import Tables
from tests.server.flow import start, to_survey, to_writing
from tests.server.study_edits import edit_arms

LEGACY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
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
    for n, effort in enumerate(["20", "80", ""]):  # the third writer leaves the slider unmoved
        session_id = start(client, access_code=f"lab-{n}")
        to_writing(client, session_id, prompt="shapeshifter")
        to_survey(client, session_id)
        while client.get(f"/s/{session_id}/survey").status_code == 200:
            response = client.post(f"/s/{session_id}/survey", data={**LEGACY, "effort": effort})
            assert response.status_code == 302, response.get_data(as_text=True)[:400]

    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    table = Tables(out.read_text(encoding="utf-8")).sections["survey"][-1]
    assert table[0] == ["condition", "answers", "mean [95% CI]", "median", "lowest", "highest"]
    assert [row for row in table[1:] if row[1] != "0"] == [["creative-high", "2", "50.00", "50.00", "20", "80"]]
