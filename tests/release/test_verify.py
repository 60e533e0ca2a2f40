"""`study release verify`: exit 0 only when checksums, schemas and the leak scan all hold."""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile

import pytest
from click.testing import CliRunner

from study.release.build import build_release
from study.release.checksums import write_sums
from study.release.cli import release
from study.release.keys import load_key
from tests.release.conftest import EMAIL, SMALLEST, copy_source, released

SESSIONS = [SMALLEST, "88daaed513824fbd9c77746eec7862d9", "7748d213f66743dd9abe45f23dacca99"]


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    from study.release.keys import init_keyfile

    base = tmp_path_factory.mktemp("small")
    key = init_keyfile(base / "study.key")
    return build_release(
        copy_source(base / "coauthor", SESSIONS),
        version="1.0.0",
        out=base / "out",
        key_path=key.path,
        processes=1,
    )


@pytest.fixture
def copy(small_release, tmp_path):
    target = tmp_path / "coauthor-1.0.0"
    shutil.copytree(small_release.directory, target)
    return target


def run_verify(*args):
    return CliRunner().invoke(release, ["verify", *map(str, args)])


def failing(result) -> list[str]:
    return [
        line[len("  FAIL ") :].strip()
        for line in result.output.splitlines()
        if line.startswith("  FAIL")
    ]


def test_a_clean_release_verifies_as_folder_and_archive(small_release):
    for target in (small_release.directory, small_release.archive):
        result = run_verify(target)
        assert result.exit_code == 0, result.output
        assert result.output.strip().endswith("verified: every check holds")


def released_log(small_release, directory):
    key = load_key(small_release.report.parent.parent / "study.key")
    return directory / "sessions" / f"{released(key, SMALLEST)}.jsonl"


def test_a_changed_session_fails_the_checksums(small_release, copy):
    session = released_log(small_release, copy)
    session.write_bytes(session.read_bytes().replace(b"audiobooks", b"audio-books", 1))
    result = run_verify(copy)
    assert result.exit_code == 1
    assert failing(result) == ["checksums", "schemas"]  # the data package's own hash disagrees too
    assert (
        f"sessions/{session.name}: content differs from its SHA256SUMS checksum" in result.output
    )


def test_an_added_or_removed_file_fails(copy):
    (copy / "notes.txt").write_text("hello\n")
    (copy / "stats.csv").unlink()
    result = run_verify(copy)
    assert result.exit_code == 1
    assert "notes.txt: not listed in SHA256SUMS (added after the build)" in result.output
    assert "stats.csv: listed in SHA256SUMS but missing" in result.output


def test_a_leak_with_matching_checksums_fails_the_leak_scan(small_release, copy):
    """Someone edits a log and recomputes SHA256SUMS: the leak scan still sees the e-mail."""
    session = released_log(small_release, copy)
    session.write_text(session.read_text().replace("audiobooks", f"audiobooks {EMAIL}", 1))
    write_sums(copy)
    result = run_verify(copy)
    assert result.exit_code == 1
    assert "leak scan" in failing(result)
    assert "EMAIL_ADDRESS" in result.output or "email address" in result.output
    assert EMAIL not in result.output  # the report locates leaks without repeating them


def test_a_raw_worker_id_is_caught_with_the_key(small_release, copy):
    from study.release.pseudonyms import ReidentificationTable

    key_path = small_release.report.parent.parent / "study.key"
    worker = sorted(ReidentificationTable(load_key(key_path)).worker_ids())[0]
    (copy / "CHANGELOG.md").write_text(
        (copy / "CHANGELOG.md").read_text() + f"\nthanks {worker.lower()}\n"
    )
    write_sums(copy)
    assert run_verify(copy).exit_code == 0  # lower case, it is not worker-shaped on its own
    result = run_verify(copy, "--key", key_path)
    assert result.exit_code == 1 and "source worker id" in result.output


def test_an_archive_with_a_tampered_member_fails(small_release, tmp_path):
    raw = gzip.decompress(small_release.archive.read_bytes())
    entries = []
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isfile() else None
            if member.name.endswith("summary.csv"):
                data = data.replace(b"combined", b"combined!")
                member.size = len(data)
            entries.append((member, data))
    tampered = tmp_path / "coauthor-1.0.0.tar.gz"
    with tarfile.open(tampered, "w:gz") as tar:
        for member, data in entries:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    result = run_verify(tampered)
    assert result.exit_code == 1 and "summary.csv: content differs" in result.output


def test_an_archive_with_an_unsafe_path_is_refused(tmp_path):
    evil = tmp_path / "coauthor-1.0.0.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    result = run_verify(evil)
    assert result.exit_code == 1 and "unsafe entry" in result.output
    assert not (tmp_path.parent / "escape.txt").exists()


@pytest.mark.parametrize("cut", ["short", "long", "bad utf-8"])
def test_a_damaged_metadata_row_is_reported_with_its_line(copy, cut):
    path = copy / "metadata.csv"
    lines = path.read_bytes().split(b"\n")
    if cut == "short":
        lines[2] = lines[2].split(b",")[0]  # only the timestamp is left
    elif cut == "long":
        lines[2] += b",one,too,many"
    else:
        lines[2] = lines[2].replace(b",", b",\xff", 1)
    path.write_bytes(b"\n".join(lines))
    write_sums(copy)
    result = run_verify(copy)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "metadata.csv line 3:" in result.output
    assert "layout" in failing(result)


def test_a_phone_number_in_a_file_name_fails_the_leak_scan(copy):
    """A file added by hand with its checksum: its name is published as its content is."""
    (copy / "notes").mkdir()
    (copy / "notes" / "call-415-555-2671.txt").write_text("Interview notes.\n")
    write_sums(copy)
    result = run_verify(copy)
    assert result.exit_code == 1
    assert failing(result) == ["leak scan"]
    assert "notes/call-415-555-2671.txt file name: PHONE_NUMBER" in result.output
