"""A choice's answers in `study report` when study.toml's options were reworded mid-study (a
survey file edited, or a shipped instrument reworded by an upgrade): answers given under the old
words are shown as they were given, beside today's options, not counted in "answers" and then in
no column."""

from __future__ import annotations

from study import config
from study.server import create_app
from tests.report.surveyed import last_survey_table, surveyed

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
    surveyed(client, [{"end_reason": "I was done"}] * 2, prompt=None)
    _with_ending(study_folder, '"I am satisfied with the document.", "Other reason"')  # reworded

    table = last_survey_table(study_folder, tmp_path)
    assert table[0] == ["condition", "answers", "I am satisfied with the document.", "Other reason", "I was done"]
    counted = [row[1:] for row in table[1:]]
    assert sum(int(row[0]) for row in counted) == 2
    assert sum(int(row[3]) for row in counted) == 2 and all(row[1:3] == ["0", "0"] for row in counted)
