"""A shipped instrument added to a study made by `study init`: coauthor-post-session asks
ownership, satisfaction and reuse, as init's [[survey]] list does. Every command that reads
study.toml refuses it naming the question and the fix the researcher can make (remove the list's
question, since a preset's ids are fixed), not the list's internal name 'post_session'."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main as study_cli

PRESET = """
[[surveys]]
name = "coauthor"
preset = "coauthor-post-session"
"""


def test_a_preset_asking_a_question_of_the_survey_list_is_refused_with_the_fix(study_folder):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + PRESET, encoding="utf-8")

    result = CliRunner().invoke(study_cli, ["status", str(study_folder)])

    assert result.exit_code != 0
    assert f"{toml}: surveys.coauthor.items.ownership: id 'ownership' is also a question of study.toml's " \
           "[[survey]] list. Fix: remove the [[survey]] table with id = \"ownership\" (or the whole list, if " \
           "this survey replaces it)." in result.output  # fmt: skip
    assert "post_session" not in result.output and "another id" not in result.output
