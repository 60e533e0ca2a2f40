"""A multiple-choice question in `study report`: how many sessions ticked each option, per
condition, as a single choice's counts are given, not only how many answered (an answer of
several options is one cell of survey.csv, its options joined with "; ")."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.server import create_app
from tests.report.conftest import Tables
from tests.server.flow import start, to_survey, to_writing

LEGACY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
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
    for n, ticked in enumerate([["Suggestions", "Prompt"], ["Undo; redo"], []]):
        session_id = start(client, access_code=f"lab-{n}")
        to_writing(client, session_id, prompt="shapeshifter")
        to_survey(client, session_id)
        while client.get(f"/s/{session_id}/survey").status_code == 200:
            response = client.post(f"/s/{session_id}/survey", data={**LEGACY, "used": ticked})
            assert response.status_code == 302, response.get_data(as_text=True)[:400]

    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    table = Tables(out.read_text(encoding="utf-8")).sections["survey"][-1]
    assert table[0] == ["condition", "answers", "Suggestions", "Undo; redo", "Prompt"]
    # Summed over the conditions the writers were assigned: 2 answered, each option ticked once.
    assert [sum(int(row[k]) for row in table[1:]) for k in range(1, 5)] == [2, 1, 1, 1]
