"""A build that crashes after verification loses nothing and burns no version: the redaction
report and the re-identification entries are written before the release folder is renamed into
place, and the archive is moved into place by the next build if the crash came after it."""

from __future__ import annotations

import csv

import pytest

from study.release import build as build_module
from study.release import publish as publish_module
from study.release import redaction_report
from study.release.build import build_release
from study.release.layout import existing_releases
from study.release.preflight import BuildError
from study.release.pseudonyms import ReidentificationTable
from study.release.verify import verify
from tests.release.conftest import SMALLEST, copy_source, released

WORKER = "AFX64B913Y91KG"  # wrote SMALLEST
OTHER = "88daaed513824fbd9c77746eec7862d9"


class Crash(BaseException):
    """The process dies here (BaseException: nothing in the build may catch it)."""


def crash_after(monkeypatch, step: str) -> None:
    owner, name = {
        "report": (redaction_report, "write"),
        "table": (ReidentificationTable, "save"),
        "archive": (build_module, "write_archive"),
        "publish": (publish_module, "publish"),
    }[step]
    original = getattr(owner, name)

    def crashing(*args, **kwargs):
        original(*args, **kwargs)
        raise Crash(step)

    monkeypatch.setattr(owner, name, crashing)


@pytest.mark.parametrize("step", ["report", "table", "archive", "publish"])
def test_a_crash_after_each_step_loses_nothing(step, key, tmp_path, monkeypatch):
    source = copy_source(tmp_path / "coauthor", [SMALLEST, OTHER])
    out = tmp_path / "releases"

    def build():
        return build_release(source, version="1.0.0", out=out, key_path=key.path, processes=1)

    with monkeypatch.context() as patch:
        crash_after(patch, step)
        with pytest.raises(Crash):
            build()
    published = step == "publish"
    # Before the folder is renamed into place the version does not exist, so it is not burnt.
    assert bool(existing_releases(out, "coauthor")) == published

    if published:  # the release exists; the next build finishes it and says so
        with pytest.raises(BuildError, match="coauthor 1.0.0 already exists"):
            build()
    else:
        build()

    folder, archive = out / "coauthor-1.0.0", out / "coauthor-1.0.0.tar.gz"
    assert folder.is_dir() and archive.is_file()
    assert verify(archive).ok and verify(folder).ok
    assert sorted(p.name for p in out.iterdir()) == ["coauthor-1.0.0", "coauthor-1.0.0.tar.gz"]
    report = key.companion(".redactions") / "coauthor-1.0.0.csv"
    with open(report, newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle))[:2] == ["session_id", "study_session_id"]
    table = ReidentificationTable(key)
    assert WORKER in table.worker_ids()
    assert table.lookup_session(released(key, SMALLEST)) == [("coauthor", SMALLEST)]
    assert table.session_ids() == {SMALLEST, OTHER}
