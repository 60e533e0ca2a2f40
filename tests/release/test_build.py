"""`study release build` on the real fixtures with personal data injected: nothing survives."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import stat
import tarfile

import pytest

from study.curation.formats import read_session
from study.curation.replay import apply_delta
from study.release.build import build_release
from study.release.layout import release_files
from study.release.preflight import BuildError
from study.release.pseudonyms import ReidentificationTable, is_pseudonym
from study.release.verify import verify
from tests.release.conftest import EMAIL, INTERFACE, SMALLEST, copy_source, released

# One process runs this module's tests, so the release they read (pii_release) is built once per
# run rather than once in each test process: 16-19 s on the slow host of docs/benchmarks.md.
pytestmark = pytest.mark.xdist_group("pii_release")


def all_bytes(directory):
    return {name: (directory / name).read_bytes() for name in release_files(directory)}


def test_the_release_has_every_part(pii_release, session_key):
    names = release_files(pii_release.directory)
    for required in (
        "README.md",
        "CHANGELOG.md",
        "datapackage.json",
        "SHA256SUMS",
        "metadata.csv",
        "metadata.parquet",
        "survey.csv",
        "stats.csv",
        "summary.csv",
        "schemas/coauthor-2021.schema.json",
        f"sessions/{released(session_key, SMALLEST)}.jsonl",
        f"sessions/{released(session_key, INTERFACE)}.jsonl",
    ):
        assert required in names
    assert pii_release.archive.name == "coauthor-1.0.0.tar.gz"
    assert pii_release.facts.sessions == 32


def test_no_injected_data_or_raw_worker_id_survives_in_any_file(pii_release, pii_source):
    for name, data in all_bytes(pii_release.directory).items():
        text = data.decode("utf-8", "replace").lower()
        escaped = (
            data.decode("unicode_escape", "replace").lower()
            if name.endswith((".json", ".jsonl"))
            else text
        )
        for fragment in pii_source.fragments:
            assert fragment.lower() not in text and fragment.lower() not in escaped, (
                name,
                fragment,
            )


def test_no_injected_data_survives_in_the_archive(pii_release, pii_source):
    stream = gzip.decompress(pii_release.archive.read_bytes())
    lowered = stream.lower()
    for fragment in pii_source.fragments:
        assert fragment.lower().encode() not in lowered, fragment
    with tarfile.open(pii_release.archive) as tar:
        names = tar.getnames()
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".parquet"):
                import pyarrow.parquet as pq

                table = pq.read_table(io.BytesIO(tar.extractfile(member).read())).to_pylist()
                assert all(is_pseudonym(row["worker_id"]) for row in table)
    assert all(name.startswith("coauthor-1.0.0") for name in names)


def test_no_state_of_any_injected_session_shows_the_data(pii_release, pii_source, session_key):
    """Typed one key at a time, data is never whole in a file: replay every moment instead."""
    for session_id in pii_source.injected:
        name = f"{released(session_key, session_id)}.jsonl"
        events = read_session(pii_release.directory / "sessions" / name).events
        text = ""
        for index, event in enumerate(events):
            text = (
                event["currentDoc"]
                if index == 0
                else (
                    apply_delta(text, event["textDelta"]["ops"])
                    if isinstance(event.get("textDelta"), dict)
                    else text
                )
            )
            lowered = text.lower()
            leaked = [f for f in pii_source.fragments if f.lower() in lowered]
            assert not leaked, (session_id, index, leaked)


def test_worker_ids_are_pseudonyms_that_map_back_through_the_table(
    pii_release, pii_source, session_key
):
    with open(pii_release.directory / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(is_pseudonym(row["worker_id"]) for row in rows)
    table = ReidentificationTable(session_key)
    assert {table.lookup(row["worker_id"])[0][1] for row in rows} == pii_source.raw_worker_ids
    assert len({row["worker_id"] for row in rows}) == len(pii_source.raw_worker_ids)


def test_survey_answers_are_redacted_and_identity_columns_dropped(pii_release, session_key):
    with open(pii_release.directory / "survey.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["session_id", "ownership", "comments"]
    comments = {row["session_id"]: row["comments"] for row in rows}
    assert comments[released(session_key, SMALLEST)] == "email me at <EMAIL_____________> anytime"


def test_the_curator_gets_a_private_report_of_what_was_redacted(pii_release, session_key):
    report = pii_release.report
    assert report.parent == session_key.companion(".redactions")
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o600
    with open(report, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {"session text", "survey"} <= {
        "survey" if r["where"].startswith("survey") else "session text" for r in rows
    }
    assert any(r["original"] == EMAIL and r["replacement"] == "<EMAIL_____________>" for r in rows)


def test_the_card_says_what_was_redacted_and_has_a_hugging_face_header(pii_release):
    import yaml

    card = (pii_release.directory / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "other" and header["language"] == ["en"]
    assert {c["config_name"] for c in header["configs"]} == {"metadata", "stats", "survey"}
    for section in (
        "## Motivation",
        "## Composition",
        "## Collection process",
        "## Preprocessing",
        "## Uses",
        "## Distribution",
        "## Maintenance",
        "### Versioning",
    ):
        assert section in card
    assert "| EMAIL_ADDRESS |" in card and "32 sessions" in card
    assert "**MAJOR**" in card and "**PATCH**" in card


def test_the_changelog_follows_keep_a_changelog(pii_release):
    changelog = (pii_release.directory / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog\n")
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in changelog
    assert f"## [1.0.0] - {pii_release.facts.date}" in changelog
    assert "### Added" in changelog and "### Security" in changelog


def test_the_frictionless_validator_accepts_the_data_package(pii_release, session_key):
    from frictionless import validate

    report = validate(str(pii_release.directory / "datapackage.json"))
    assert report.valid, report.flatten(["taskName", "rowNumber", "type", "note"])
    package = json.loads((pii_release.directory / "datapackage.json").read_text())
    assert package["version"] == "1.0.0"
    assert {r["name"] for r in package["resources"]} >= {
        "metadata",
        "metadata-parquet",
        "survey",
        "stats",
        f"session-{released(session_key, SMALLEST)}",
    }


def test_verify_passes_on_the_folder_and_on_the_archive(pii_release, pii_source):
    for target in (pii_release.directory, pii_release.archive):
        report = verify(target, known_ids=pii_source.raw_worker_ids)
        assert report.ok, report.render()


def test_the_same_input_key_and_version_build_byte_identical_files(
    pii_release, pii_source, session_key, tmp_path
):
    again = build_release(
        pii_source.path, version="1.0.0", out=tmp_path, key_path=session_key.path, processes=1
    )
    assert all_bytes(again.directory) == all_bytes(pii_release.directory)
    assert again.archive.read_bytes() == pii_release.archive.read_bytes()


def test_an_existing_version_is_never_overwritten(pii_release, pii_source, session_key):
    before = all_bytes(pii_release.directory)
    with pytest.raises(BuildError, match="already exists"):
        build_release(
            pii_source.path,
            version="1.0.0",
            out=pii_release.directory.parent,
            key_path=session_key.path,
        )
    assert all_bytes(pii_release.directory) == before
    assert not list(pii_release.directory.parent.glob(".*.partial"))


def test_the_archive_is_deterministic_and_safe(pii_release):
    raw = pii_release.archive.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip mtime 0
    with tarfile.open(pii_release.archive) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == sorted(m.name for m in members)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert len({m.mtime for m in members}) == 1


def test_a_leak_in_the_finished_release_blocks_it(key, tmp_path, monkeypatch):
    """If redaction ever missed something, the leak scan stops the release and removes it."""
    from study.release import redact_source

    real = redact_source.process

    def leaky(session):
        processed = real(session)
        processed.data = processed.data.replace(b"audiobooks", EMAIL.encode(), 1)
        return processed

    monkeypatch.setattr(redact_source, "process", leaky)
    source = copy_source(tmp_path / "coauthor", [SMALLEST])
    with pytest.raises(BuildError, match="leak scan"):
        build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=1)
    assert list((tmp_path / "out").iterdir()) == []
    assert not key.companion(".reid").exists()  # nothing was issued either
