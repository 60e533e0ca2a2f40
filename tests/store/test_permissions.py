"""Private files are private whatever the umask (study.store.permissions): a study folder and
its database, an export, a release key and the curator's redaction list are 0600 in 0700
folders under the usual umask 0022; a release for publication is world-readable on purpose,
even under umask 0077."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from study import config
from study.cli import write_study_files
from study.export.coauthor import export_study
from study.release.build import build_release
from study.release.keys import init_keyfile
from study.server import create_app
from tests.conftest import CONTACT
from tests.release.conftest import copy_source, metadata_rows
from tests.server.flow import finish, start, to_writing


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Run the test under a given umask (a process-wide setting: restored after)."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


def test_a_study_folder_and_its_database_are_private_under_umask_0022(tmp_path, umask):
    folder = tmp_path / "studies" / "pilot"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    create_app(config.load(folder), suggestion_engine=object())

    assert _mode(folder) == 0o700 and _mode(folder.parent) == 0o700
    assert _mode(folder / "study.db") == 0o600


def test_an_export_of_worker_ids_and_keystrokes_is_0600_in_a_0700_folder(study, tmp_path, umask):
    client = create_app(study, suggestion_engine=object()).test_client()
    session_id = start(client, assignmentId="A1", hitId="H1", workerId="A1WORKERSECRET")
    to_writing(client, session_id)
    finish(client, session_id)
    out = tmp_path / "exports" / "2026-11"

    summary = export_study(study, out)

    written = sorted(out.iterdir())
    assert summary.sessions == 1 and {p.name for p in written} >= {f"{session_id}.jsonl", "metadata.csv"}
    assert "A1WORKERSECRET" in (out / "metadata.csv").read_text()
    assert [(p.name, _mode(p)) for p in written] == [(p.name, 0o600) for p in written]
    assert _mode(out) == 0o700 and _mode(out.parent) == 0o700


def test_a_key_and_its_redaction_list_are_private_and_the_release_is_public(tmp_path, umask):
    key = init_keyfile(tmp_path / "team" / "keys" / "study.key")
    source = copy_source(tmp_path / "source", [metadata_rows()[0]["session_id"]])
    umask(0o077)  # a careful curator's umask: the release must still be readable by everyone

    result = build_release(source, version="1.0.0", out=tmp_path / "releases", key_path=key.path, processes=1)

    assert _mode(key.path) == 0o600 and _mode(key.path.parent) == 0o700
    assert _mode(result.report) == 0o600 and _mode(result.report.parent) == 0o700
    published = [result.directory, *result.directory.rglob("*")]
    assert all(_mode(p) == (0o755 if p.is_dir() else 0o644) for p in published)
    assert _mode(result.archive) == 0o644
