"""`study export` when the disk fills (or the folder turns read-only) partway: a message naming
the file and the fix, and nothing of this run left behind (an OUT holding some session files but
no metadata.csv would look like a smaller, finished export)."""

from __future__ import annotations

import errno

import pytest
from click.testing import CliRunner

import study.export.coauthor as coauthor
from study.cli import main
from tests.server.flow import finish, start, to_writing


@pytest.fixture
def three_sessions(client):
    for code in ("lab-a", "lab-b", "lab-c"):
        session_id = start(client, access_code=code)
        to_writing(client, session_id)
        finish(client, session_id)


@pytest.mark.parametrize("fail_at", [2, 4])  # a session file; metadata.csv
def test_a_failed_write_leaves_no_half_export(three_sessions, study_folder, tmp_path, monkeypatch, fail_at):
    real, calls = coauthor.write_private, []

    def filling(path, data, **options):
        calls.append(path)
        if len(calls) == fail_at:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, **options)

    monkeypatch.setattr(coauthor, "write_private", filling)
    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError), repr(result.exception)
    assert "No space left on device" in result.output and "Fix:" in result.output
    assert not out.exists(), sorted(out.iterdir())


def test_a_failed_export_keeps_what_an_earlier_one_wrote(three_sessions, study_folder, tmp_path, monkeypatch):
    out = tmp_path / "export"
    assert CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)]).exit_code == 0
    before = sorted(p.name for p in out.iterdir())

    def full(path, data, **options):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(coauthor, "write_private", full)
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_failed_export_after_metadata_leaves_no_row_without_its_log(client, three_sessions, study_folder, tmp_path,
                                                                     monkeypatch):
    # An earlier export of three sessions; a fourth writer finishes; the next export fills the
    # disk after its new metadata.csv replaced the earlier one (at survey.csv). The fourth
    # writer's log goes again: the metadata.csv left in OUT must not name it.
    import csv

    out = tmp_path / "export"
    assert CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)]).exit_code == 0
    before = (out / "metadata.csv").read_bytes()
    fourth = start(client, access_code="lab-d")
    to_writing(client, fourth)
    finish(client, fourth)
    real = coauthor.write_private

    def full_at_the_surveys(path, data, **options):
        if path.name == "survey.csv":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, **options)

    monkeypatch.setattr(coauthor, "write_private", full_at_the_surveys)
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output

    with open(out / "metadata.csv", newline="") as handle:
        listed = [row["session_id"] for row in csv.DictReader(handle)]
    assert [s for s in listed if not (out / f"{s}.jsonl").is_file()] == []
    assert (out / "metadata.csv").read_bytes() == before
