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
