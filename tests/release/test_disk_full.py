"""`study release build` when the disk fills or the releases folder turns read-only partway: a
message naming the folder and the fix instead of a traceback, nothing of the build left behind,
and the version still free for the next build."""

from __future__ import annotations

import errno
import gzip

from click.testing import CliRunner

import study.release.archive as archive_module
from study.cli import main
from tests.read_only import read_only
from tests.release.conftest import SMALLEST, copy_source

OTHER = "35f12c5f76a443f2b20e8a6165ab998f"


def _build(source, out, key):
    return CliRunner().invoke(
        main, ["release", "build", str(source), "--version", "1.0.0", "--out", str(out),
               "--key", str(key.path), "-j", "1"],
    )  # fmt: skip


def test_a_read_only_releases_folder_is_named_with_the_fix_and_burns_no_version(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [SMALLEST, OTHER])
    out = tmp_path / "releases"
    out.mkdir()
    with read_only(out):
        result = _build(source, out, key)
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError), repr(result.exception)
    assert "cannot write the release" in result.output and str(out) in result.output
    assert "coauthor 1.0.0 was not released" in result.output and "Fix:" in result.output
    assert list(out.iterdir()) == []
    again = _build(source, out, key)
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in out.iterdir()) == ["coauthor-1.0.0", "coauthor-1.0.0.tar.gz"]


def test_a_disk_that_fills_while_the_archive_is_written_leaves_no_half_archive(key, tmp_path, monkeypatch):
    source = copy_source(tmp_path / "coauthor", [SMALLEST, OTHER])
    out = tmp_path / "releases"

    class FullDisk(gzip.GzipFile):
        def write(self, data):
            super().write(data[: len(data) // 2])
            self.fileobj.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(archive_module.gzip, "GzipFile", FullDisk)
    result = _build(source, out, key)
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError), repr(result.exception)
    assert "No space left on device" in result.output and "Fix:" in result.output
    assert list(out.iterdir()) == [], sorted(p.name for p in out.iterdir())
    monkeypatch.undo()
    assert _build(source, out, key).exit_code == 0
