"""`study report --out` in a folder that does not exist, or a disk that fills while the page is
written: a message naming the file and the fix, no traceback, and no `report.html.partial` left;
an --out that cannot be written is said before the sessions are read."""

from __future__ import annotations

import errno
from pathlib import Path

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR


def _not_read(*args, **kwargs):
    raise AssertionError("the sessions were read before the report's folder was found unwritable")


def test_report_into_a_missing_folder_says_so_before_reading_anything(tmp_path, monkeypatch):
    monkeypatch.setattr("study.report.load", _not_read)
    out = tmp_path / "no-such-folder" / "report.html"
    result = CliRunner().invoke(main, ["report", str(COAUTHOR / "sessions"), "--out", str(out), "-j", "1"])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError), repr(result.exception)
    assert str(out) in result.output and "Fix:" in result.output


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    out = tmp_path / "report.html"
    real = Path.write_text

    def full(self, data, *args, **kwargs):
        if self.name.endswith(".partial"):
            real(self, data[: len(data) // 2], *args, **kwargs)  # half written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    result = CliRunner().invoke(main, ["report", str(COAUTHOR / "sessions"), "--out", str(out), "-j", "1"])
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output and str(out) in result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("report")) == []


def test_report_into_a_path_under_a_file_says_so_before_reading_anything(tmp_path, monkeypatch):
    # e.g. --out report.html/index.html after an earlier report.html
    monkeypatch.setattr("study.report.load", _not_read)
    (tmp_path / "report.html").write_text("an earlier report", encoding="utf-8")
    out = tmp_path / "report.html" / "index.html"
    result = CliRunner().invoke(main, ["report", str(COAUTHOR / "sessions"), "--out", str(out), "-j", "1"])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError), repr(result.exception)
    assert str(out) in result.output and "Fix:" in result.output
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == "an earlier report"
