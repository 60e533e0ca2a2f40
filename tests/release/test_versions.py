"""A dataset's history: sessions added, a writer withdrawn, versions checked, diffs listed."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from study.curation.formats import read_session
from study.release.build import build_release
from study.release.cli import release, withdraw
from study.release.diff import diff_releases
from study.release.keys import init_keyfile
from study.release.preflight import BuildError
from study.release.pseudonyms import pseudonym
from tests.release.conftest import EMAIL, copy_source, released, write_metadata, write_session
from tests.release.inject import Writer

FIRST = [
    "b5f8899be4134579aa75c7625414fa25",
    "88daaed513824fbd9c77746eec7862d9",
    "7fbc70830a944d02af8a809cc8a5111b",
    "ae1f2b6df9a74fe4b1eeec602bf6c3ae",
]
ADDED = ["6395e22e141c4ee0bf233b95a63a61ea", "35f12c5f76a443f2b20e8a6165ab998f"]
WITHDRAWN_WORKER = "AFXYOGWOLRAFK6"  # wrote 88daaed5, 7fbc7083 and 6395e22e
WITHDRAWN = sorted(
    ["88daaed513824fbd9c77746eec7862d9", "7fbc70830a944d02af8a809cc8a5111b", ADDED[0]]
)
CORRECTED = FIRST[0]


def ids(history, sessions, namespace="coauthor") -> list[str]:
    """The released ids of these source sessions, sorted."""
    return sorted(released(history["key"], s, namespace) for s in sessions)


def metadata(release_dir) -> dict[str, dict]:
    with open(release_dir / "metadata.csv", newline="") as handle:
        return {row["session_id"]: row for row in csv.DictReader(handle)}


# One process runs this module's tests, so `history` (three releases, 3-6 s) is built
# once per run rather than once in each test process (as in tests/release/test_build.py).
pytestmark = pytest.mark.xdist_group("release_history")


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """1.0.0 (4 sessions) -> 1.1.0 (2 added) -> a writer withdraws, a log is corrected -> 1.1.1."""
    base = tmp_path_factory.mktemp("history")
    (base / "keys").mkdir()
    key = init_keyfile(base / "keys" / "study.key")
    out = base / "releases"

    def build(source, version):
        return build_release(source, version=version, out=out, key_path=key.path, processes=2)

    v1 = build(copy_source(base / "v1" / "coauthor", FIRST), "1.0.0")
    v2_source = copy_source(base / "v2" / "coauthor", FIRST + ADDED)
    v2 = build(v2_source, "1.1.0")
    result = CliRunner().invoke(withdraw, [WITHDRAWN_WORKER, "--key", str(key.path)])
    assert result.exit_code == 0, result.output
    writer = Writer(read_session(v2_source / "sessions" / f"{CORRECTED}.jsonl").events)
    writer.type(f" Reach me at {EMAIL}.")
    write_session(v2_source / "sessions" / f"{CORRECTED}.jsonl", writer.events)
    v3 = build(v2_source, "1.1.1")
    return {"key": key, "out": out, "source": v2_source, "releases": (v1, v2, v3)}


def test_a_minor_release_adds_sessions_and_keeps_every_pseudonym(history):
    v1, v2, _ = history["releases"]
    before, after = metadata(v1.directory), metadata(v2.directory)
    assert sorted(after) == ids(history, FIRST + ADDED)
    for session_id, row in before.items():  # a session keeps its released id and pseudonym
        assert after[session_id]["worker_id"] == row["worker_id"]
    diff = diff_releases(v1.directory, v2.directory)
    assert diff.added == ids(history, ADDED) and diff.removed == [] and diff.changed == []
    assert "### Added\n- 2 sessions:" in (v2.directory / "CHANGELOG.md").read_text()


def test_a_withdrawn_writer_leaves_the_next_release(history):
    v1, v2, v3 = history["releases"]
    rows = metadata(v3.directory)
    withdrawn = ids(history, WITHDRAWN)
    assert not set(withdrawn) & set(rows)
    assert not any((v3.directory / "sessions" / f"{s}.jsonl").exists() for s in withdrawn)
    gone = pseudonym(history["key"], WITHDRAWN_WORKER, "coauthor")
    assert gone in {r["worker_id"] for r in metadata(v2.directory).values()}
    assert gone not in {r["worker_id"] for r in rows.values()}
    assert v3.facts.withdrawn_excluded == 3
    # Published releases are not touched.
    assert set(withdrawn) <= set(metadata(v2.directory))


def test_the_changelog_counts_withdrawals_without_naming_them(history):
    changelog = (history["releases"][2].directory / "CHANGELOG.md").read_text()
    entry = changelog.split("## [1.1.0]")[0]
    assert "## [1.1.1]" in entry and "3 sessions whose writer withdrew from the study." in entry
    assert not any(s in entry for s in WITHDRAWN + ids(history, WITHDRAWN))
    assert f"`{released(history['key'], CORRECTED)}` (log; metadata: time, num_event, written_by_human)" in entry
    # the whole history stays, newest first
    assert (
        changelog.index("## [1.1.1]")
        < changelog.index("## [1.1.0]")
        < changelog.index("## [1.0.0]")
    )


def test_diff_lists_added_removed_and_changed_sessions(history):
    _, v2, v3 = history["releases"]
    result = CliRunner().invoke(release, ["diff", str(v2.directory), str(v3.archive)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "coauthor 1.1.0 -> coauthor 1.1.1"
    assert "added 0 sessions" in lines
    assert "removed 3 sessions:" in lines
    assert all(f"  - {s}" in lines for s in ids(history, WITHDRAWN))
    assert "changed 1 session:" in lines
    assert f"  ~ {released(history['key'], CORRECTED)} (log; metadata: time, num_event, written_by_human)" in lines


def test_a_patch_version_cannot_add_sessions(history, tmp_path):
    source = copy_source(
        tmp_path / "coauthor", FIRST + ADDED + ["ce62f7cdb323419ebd92d4dc8b61cdb1"]
    )
    with pytest.raises(
        BuildError,
        match=r"1 session\(s\) were added: that needs a minor release \(1.2.0 or later\)",
    ):
        build_release(
            source, version="1.1.2", out=history["out"], key_path=history["key"].path, processes=2
        )
    assert not (history["out"] / "coauthor-1.1.2").exists()


def test_another_key_needs_a_major_version(history, tmp_path):
    other = init_keyfile(tmp_path / "other.key")
    with pytest.raises(BuildError, match="re-keyed.*major release"):
        build_release(
            history["source"], version="1.2.0", out=history["out"], key_path=other.path, processes=2
        )


def test_another_dataset_of_the_same_name_is_told_to_take_its_own_name(history, tmp_path):
    """Every `study init` study is named "coauthor": a second dataset built into the same folder
    with its own key must not be sent on to "build the next version" of the first."""
    other = init_keyfile(tmp_path / "other.key")
    source = copy_source(tmp_path / "coauthor", ADDED)

    def build(version, *more):
        return CliRunner().invoke(release, [
            "build", str(source), "--version", version, "--out", str(history["out"]),
            "--key", str(other.path), "-j", "1", *more,
        ])  # fmt: skip

    for version in ("1.0.0", "1.1.2"):  # the name taken, then a next version of the other's
        refused = build(version)
        assert refused.exit_code == 1
        output = " ".join(refused.output.split())
        assert "was built with another key" in output, output
        assert history["key"].fingerprint in output and other.fingerprint in output
        assert "own name with --name" in output
        assert "Build the next version" not in output
    assert build("1.0.0", "--name", "pilot").exit_code == 0
    assert (history["out"] / "pilot-1.0.0").is_dir()


def test_a_version_below_the_latest_is_refused(history):
    with pytest.raises(BuildError, match="must be greater than 1.1.1"):
        build_release(
            history["source"], version="1.0.5", out=history["out"], key_path=history["key"].path
        )


def test_a_namespace_gives_unlinkable_pseudonyms(history, tmp_path):
    other = build_release(
        copy_source(tmp_path / "src", FIRST[:1]),
        version="1.0.0",
        out=tmp_path / "out",
        key_path=history["key"].path,
        name="pilot",
        namespace="pilot",
        processes=1,
    )
    assert other.directory.name == "pilot-1.0.0"
    v1 = history["releases"][0]
    (pilot_id,) = ids(history, FIRST[:1], "pilot")
    (coauthor_id,) = ids(history, FIRST[:1])
    assert pilot_id != coauthor_id  # sessions cannot be matched across namespaces either
    assert (
        metadata(other.directory)[pilot_id]["worker_id"]
        != metadata(v1.directory)[coauthor_id]["worker_id"]
    )


def test_a_withdrawn_writer_whose_sessions_were_erased_from_the_source_is_still_a_patch(tmp_path):
    """Honouring a withdrawal often means deleting the writer's data from the source too; their
    sessions are still gone because they withdrew, not for some other reason."""
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    source = copy_source(tmp_path / "coauthor", FIRST)
    build_release(source, version="1.0.0", out=out, key_path=key.path, processes=1)
    result = CliRunner().invoke(withdraw, [WITHDRAWN_WORKER, "--key", str(key.path)])
    assert result.exit_code == 0, result.output
    # The curator erases the writer's sessions from the source folder as well.
    erased = [s for s in FIRST if s in WITHDRAWN]
    for session_id in erased:
        (source / "sessions" / f"{session_id}.jsonl").unlink()
    with open(source / "metadata.csv", newline="", encoding="utf-8") as handle:
        kept = [r for r in csv.DictReader(handle) if r["worker_id"] != WITHDRAWN_WORKER]
    write_metadata(source / "metadata.csv", kept)

    patch = build_release(source, version="1.0.1", out=out, key_path=key.path, processes=1)

    entry = (patch.directory / "CHANGELOG.md").read_text().split("## [1.0.0]")[0]
    assert "2 sessions whose writer withdrew from the study." in entry
    gone = [released(key, s) for s in erased]
    assert not any(s in entry for s in gone), entry
    assert "no longer in the source" not in entry


def test_a_release_that_only_corrects_survey_answers_says_so_in_the_changelog(tmp_path):
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    source = copy_source(tmp_path / "coauthor", FIRST[:2])
    survey = source / "survey.csv"
    survey.write_text(f"session_id,ownership\n{FIRST[0]},6\n{FIRST[1]},3\n", encoding="utf-8")
    build_release(source, version="1.0.0", out=out, key_path=key.path, processes=1)
    survey.write_text(f"session_id,ownership\n{FIRST[0]},6\n{FIRST[1]},4\n", encoding="utf-8")

    patch = build_release(source, version="1.0.1", out=out, key_path=key.path, processes=1)

    entry = (patch.directory / "CHANGELOG.md").read_text().split("## [1.0.0]")[0]
    assert "Documentation only" not in entry, entry
    assert "`survey.csv`" in entry, entry


def test_a_session_the_curator_excludes_is_named_as_left_out_in_the_changelog(tmp_path):
    """`--exclude` removes a session on purpose: the next version's changelog says the curator
    left it out, not that it is "no longer in the source" (it still is)."""
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    source = copy_source(tmp_path / "coauthor", FIRST)

    def build(version, *extra):
        result = CliRunner().invoke(release, ["build", str(source), "--version", version, "--out",
                                              str(out), "--key", str(key.path), "-j", "1", *extra])  # fmt: skip
        assert result.exit_code == 0, result.output

    build("1.0.0")
    build("2.0.0", "--exclude", FIRST[0])
    entry = (out / "coauthor-2.0.0" / "CHANGELOG.md").read_text().split("## [1.0.0]")[0]
    gone = released(key, FIRST[0], "coauthor")
    assert f"1 session the curator left out (`--exclude`): `{gone}`." in entry
    assert "no longer in the source" not in entry
