"""A report is shared and published with a paper: it names its source and the files it read
relative to its own folder, or by their names, never where they lie on the researcher's disk
(/home/alice/...: a user name and a folder layout)."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.report.conftest import FINISHED


def _exported(folder):
    (folder / "sessions").mkdir(parents=True)
    for session_id in FINISHED:
        shutil.copy(COAUTHOR / "sessions" / f"{session_id}.jsonl", folder / "sessions")
    shutil.copy(COAUTHOR / "metadata.csv", folder / "metadata.csv")
    return folder


def _report(source, out) -> str:
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_a_report_written_elsewhere_names_its_source_and_metadata_without_the_local_path(tmp_path):
    source = _exported(tmp_path / "home" / "alice" / "exp")
    (source / "preregistration.json").write_text("{not json")  # the report says why it is not trusted
    (tmp_path / "share").mkdir()

    html = _report(source.resolve(), tmp_path / "share" / "report.html")

    assert str(tmp_path) not in html and "alice" not in html
    assert "Source: exp — a folder of exported sessions" in html
    assert "Read metadata from metadata.csv." in html
    assert "cannot be trusted: preregistration.json line 1: not JSON" in html


def test_a_report_beside_its_data_names_the_files_relative_to_its_own_folder(tmp_path):
    source = _exported(tmp_path / "home" / "alice" / "exp")

    html = _report(source.resolve(), tmp_path / "home" / "alice" / "report.html")

    assert str(tmp_path) not in html
    assert "Source: exp — " in html and "Read metadata from exp/metadata.csv." in html


def test_a_report_of_a_study_folder_says_it_read_the_study_database_not_a_metadata_csv(study_folder, tmp_path):
    # The study's sessions are exported into a scratch folder for the report; its Overview said
    # "Read metadata from metadata.csv.", a file the study folder does not hold, while the
    # command line said "Read metadata from the study database."
    html = _report(study_folder, tmp_path / "report.html")

    assert "Read metadata from the study database." in html
    assert "metadata.csv" not in html
