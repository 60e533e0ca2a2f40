"""An `--out` that is a stream, not a file: `study report --out /dev/null` to check a source
without keeping the page, or a link to it. The commands write whole files under a temporary
name and rename them into place; renamed onto /dev/null, that put a regular file where the
device was (as root: the machine's /dev/null, after which PostgreSQL's initdb and every
`> /dev/null` broke). They now write into a stream, and `study backup` refuses one.

Each test gives the command a link to /dev/null, so the old rename replaces the link (and the
test sees it), never the device itself."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.store.test_backup import backup, with_events

DEVICE = Path("/dev/null")


def _link_to_the_device(tmp_path: Path, name: str) -> Path:
    link = tmp_path / name
    link.symlink_to(DEVICE)
    return link


def _still_the_device(link: Path) -> None:
    assert link.is_symlink(), f"{link} was replaced by a regular file"
    assert stat.S_ISCHR(DEVICE.stat().st_mode)
    assert not list(link.parent.glob("*.partial")) and not list(link.parent.glob(".*.partial"))


def _two_sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for log in sorted((COAUTHOR / "sessions").glob("*.jsonl"))[:2]:
        shutil.copy(log, folder / log.name)
    shutil.copy(COAUTHOR / "metadata.csv", folder / "metadata.csv")
    return folder


def test_a_report_into_dev_null_is_written_into_it(tmp_path):
    out = _link_to_the_device(tmp_path, "report.html")

    result = CliRunner().invoke(main, ["report", str(_two_sessions(tmp_path)), "--out", str(out), "-j", "1"])

    assert result.exit_code == 0, result.output
    _still_the_device(out)


def test_curate_stats_into_dev_null_is_written_into_it(tmp_path):
    sessions = _two_sessions(tmp_path)
    for name in ("stats.csv", "stats.parquet"):
        out = _link_to_the_device(tmp_path, name)

        result = CliRunner().invoke(main, ["curate", "stats", str(sessions), "--out", str(out), "-j", "1"])

        assert result.exit_code == 0, result.output
        _still_the_device(out)


def test_a_backup_onto_dev_null_is_refused_with_the_fix(study_folder, tmp_path):
    with_events(study_folder, 3)
    out = _link_to_the_device(tmp_path, "study.db")

    refused = backup(str(study_folder), "--out", str(out), "--overwrite")

    assert refused.returncode == 1
    assert f"{out} is not a file but a device or a pipe" in refused.stderr
    assert "give --out a file name" in refused.stderr
    _still_the_device(out)
