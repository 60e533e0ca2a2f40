"""A curator renames a condition or drops a prompt in study.toml after sessions were stored
under it: `study export` (`--format proactive` too), `study curate validate`, `study report`
(and `--table3`) and `study release build` name study.toml, the missing name and the fix, and
write nothing (no OUT with some session files and no metadata.csv, which would look like a
smaller, finished export; no session called forged)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.cli import main
from study.release.keys import init_keyfile
from tests.server.flow import finish, start, to_writing


def _two_finished_sessions(client):
    for code in ("lab-a", "lab-b"):
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt="shapeshifter")
        finish(client, session_id)


def _rename_conditions(folder):
    path = folder / "study.toml"
    text = path.read_text()
    for old in ("creative-low", "creative-high"):
        assert f'name = "{old}"' in text
        text = text.replace(f'name = "{old}"', f'name = "{old}-v2"')
    path.write_text(text)


def _drop_prompt(folder, code="shapeshifter"):
    path = folder / "study.toml"
    text = path.read_text()
    at = text.index(f'code = "{code}"')
    begin = text.rfind("[[prompts]]", 0, at)
    end = text.index("[[prompts]]", at)
    path.write_text(text[:begin] + text[end:])


def _commands(tmp_path, folder):
    key = init_keyfile(tmp_path / "k.key").path
    return {
        "export": (["export", str(folder), "--out", str(tmp_path / "out")], tmp_path / "out"),
        "report": (["report", str(folder), "--out", str(tmp_path / "r.html")], tmp_path / "r.html"),
        "table3": (["report", str(folder), "--table3"], None),
        "proactive": (["export", str(folder), "--format", "proactive", "--out", str(tmp_path / "out")], tmp_path / "out"),
        "validate": (["curate", "validate", str(folder)], None),
        "release": (["release", "build", str(folder), "--version", "1.0.0", "--out",
                     str(tmp_path / "releases"), "--key", str(key)], tmp_path / "releases"),
    }  # fmt: skip


@pytest.mark.parametrize("edit, missing", [(_rename_conditions, "creative-low"), (_drop_prompt, "shapeshifter")])
@pytest.mark.parametrize("command", ["export", "report", "table3", "release", "proactive", "validate"])
def test_a_name_gone_from_study_toml_is_named_and_nothing_is_written(client, study_folder, tmp_path, edit, missing, command):
    _two_finished_sessions(client)
    edit(study_folder)
    args, output = _commands(tmp_path, study_folder)[command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, KeyError), repr(result.exception)
    assert str(study_folder / "study.toml") in result.output
    assert f"'{missing}'" in result.output and "Fix: restore" in result.output
    if output is not None:
        assert not output.exists() or (output.is_dir() and not any(output.iterdir()))


def test_answers_to_a_question_since_removed_from_study_toml_stay_in_survey_csv(client, study_folder, tmp_path):
    # A question dropped from the post-session survey after a pilot: the answers the first
    # writers gave it are the researcher's data still, in survey.csv as in surveys.json.
    import csv

    _two_finished_sessions(client)  # each answered reuse = 7
    path = study_folder / "study.toml"
    text = path.read_text()
    question = '[[survey]]\nid = "reuse"\n'
    at = text.index(question)
    path.write_text(text[:at] + text[text.index("[[survey]]", at + len(question)):])

    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(tmp_path / "out")])

    assert result.exit_code == 0, result.output
    with open(tmp_path / "out" / "survey.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row.get("reuse") for row in rows] == ["7", "7"]
    assert [row["ownership"] for row in rows] == ["6", "6"]
