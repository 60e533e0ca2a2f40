"""`study export --out` a folder that holds another dataset (the CoAuthor release, another
study's export): refused before anything is written, since the export would replace that
folder's metadata.csv (its only record of those writers) and leave its logs beside this study's,
read as one dataset by study report, study curate and study release build."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.server.flow import finish, start, to_writing


def _one_finished(client) -> str:
    session_id = start(client, access_code="lab-a")
    to_writing(client, session_id)
    finish(client, session_id)
    return session_id


def test_an_export_into_the_coauthor_release_is_refused_and_changes_nothing(client, study_folder, tmp_path):
    _one_finished(client)
    out = shutil.copytree(COAUTHOR / "sessions", tmp_path / "coauthor")
    shutil.copyfile(COAUTHOR / "metadata.csv", out / "metadata.csv")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])

    assert result.exit_code == 1, result.output
    assert f"{out}: holds 31 session log(s) of no session of this study" in result.output
    assert "a metadata.csv naming 31 session(s)" in result.output
    assert "Fix: choose an empty --out folder" in result.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_metadata_csv_of_another_dataset_alone_is_refused_too(client, study_folder, tmp_path):
    _one_finished(client)
    out = tmp_path / "export"
    out.mkdir()
    shutil.copyfile(COAUTHOR / "metadata.csv", out / "metadata.csv")
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "a metadata.csv naming 31 session(s) of no session of this study" in result.output
    assert [p.name for p in out.iterdir()] == ["metadata.csv"]


def test_an_earlier_export_of_the_same_study_is_exported_into_again(client, study_folder, tmp_path):
    first = _one_finished(client)
    out = tmp_path / "export"
    assert CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)]).exit_code == 0
    second = start(client, access_code="lab-b")
    to_writing(client, second)
    finish(client, second)
    again = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "Exported 2 sessions" in again.output
    assert {f"{first}.jsonl", f"{second}.jsonl"} <= {p.name for p in out.iterdir()}
