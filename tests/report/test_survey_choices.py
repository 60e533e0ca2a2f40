"""A choice's answers in `study report` when study.toml's options were reworded mid-study (a
survey file edited, or a shipped instrument reworded by an upgrade): answers given under the old
words are shown as they were given, beside today's options, not counted in "answers" and then in
no column."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.server import create_app
from tests.report.conftest import Tables
from tests.server.flow import start, to_survey, to_writing

LEGACY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
ENDING = """
[[surveys]]
name = "ending"
placement = "after_session"
[[surveys.items]]
id = "end_reason"
type = "single"
text = "Why did you end the session?"
options = [{options}]
"""


def _with_ending(folder, options: str):
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8").split("\n[[surveys]]\nname = \"ending\"")[0]
    toml.write_text(text + ENDING.replace("{options}", options), encoding="utf-8")
    return config.load(folder)


def test_answers_given_under_an_option_s_old_words_keep_their_own_column(study_folder, tmp_path):
    client = create_app(_with_ending(study_folder, '"I was done", "Other reason"'),
                        suggestion_engine=object()).test_client()  # fmt: skip
    for n in range(2):
        session_id = start(client, access_code=f"lab-{n}")
        to_writing(client, session_id, prompt=None)
        to_survey(client, session_id)
        while client.get(f"/s/{session_id}/survey").status_code == 200:
            response = client.post(f"/s/{session_id}/survey", data={**LEGACY, "end_reason": "I was done"})
            assert response.status_code == 302, response.get_data(as_text=True)[:400]
    _with_ending(study_folder, '"I am satisfied with the document.", "Other reason"')  # reworded

    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    table = Tables(out.read_text(encoding="utf-8")).sections["survey"][-1]
    assert table[0] == ["condition", "answers", "I am satisfied with the document.", "Other reason", "I was done"]
    counted = [row[1:] for row in table[1:]]
    assert sum(int(row[0]) for row in counted) == 2
    assert sum(int(row[3]) for row in counted) == 2 and all(row[1:3] == ["0", "0"] for row in counted)
