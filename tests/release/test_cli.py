"""The commands as a curator types them: keys, release build/verify/diff, withdraw."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from study.release.cli import keys, release, withdraw
from study.release.keys import init_keyfile
from study.release.pseudonyms import pseudonym
from study.release.withdraw import load_withdrawals, withdrawals_path
from tests.release.conftest import SMALLEST, copy_source, released

WORKER = "AFX64B913Y91KG"  # wrote SMALLEST


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("cli")
    key = init_keyfile(base / "study.key")
    source = copy_source(base / "coauthor", [SMALLEST, "88daaed513824fbd9c77746eec7862d9"])
    result = CliRunner().invoke(
        release,
        [
            "build",
            str(source),
            "--version",
            "1.0.0",
            "--out",
            str(base / "out"),
            "--key",
            str(key.path),
            "-j",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    return {"key": key, "source": source, "out": base / "out", "output": result.output}


def test_build_reports_what_it_did_and_where_the_review_list_is(built):
    output = built["output"]
    assert "Built" in output and "2 sessions by 2 writers" in output
    assert "coauthor-1.0.0.tar.gz" in output
    assert "study.key.redactions/coauthor-1.0.0.csv" in output and "keep it private" in output


def test_build_refuses_an_existing_version_with_a_clear_message(built):
    result = CliRunner().invoke(
        release,
        [
            "build",
            str(built["source"]),
            "--version",
            "1.0.0",
            "--out",
            str(built["out"]),
            "--key",
            str(built["key"].path),
        ],
    )
    assert result.exit_code == 1
    assert "already exists" in result.output and "never overwritten" in result.output


def test_build_refuses_a_bad_version(built):
    result = CliRunner().invoke(
        release,
        [
            "build",
            str(built["source"]),
            "--version",
            "v2",
            "--out",
            str(built["out"]),
            "--key",
            str(built["key"].path),
        ],
    )
    assert result.exit_code == 1 and "not a version MAJOR.MINOR.PATCH" in result.output


def test_keys_lookup_finds_the_worker_behind_a_pseudonym(built):
    alias = pseudonym(built["key"], WORKER, "coauthor")
    result = CliRunner().invoke(keys, ["lookup", alias, "--key", str(built["key"].path)])
    assert result.exit_code == 0 and result.output == f"coauthor\t{WORKER}\n"
    unknown = CliRunner().invoke(keys, ["lookup", "w" + "0" * 20, "--key", str(built["key"].path)])
    assert unknown.exit_code == 1


def test_keys_lookup_finds_the_session_behind_a_released_id(built):
    (name,) = [p.stem for p in (built["out"] / "coauthor-1.0.0" / "sessions").iterdir()
               if p.stem == released(built["key"], SMALLEST)]  # fmt: skip
    result = CliRunner().invoke(keys, ["lookup", name, "--key", str(built["key"].path)])
    assert result.exit_code == 0 and result.output == f"coauthor\tsession {SMALLEST}\n"


def test_verify_with_the_key_catches_a_study_session_id(built, tmp_path):
    import shutil

    from study.release.checksums import write_sums

    copy = tmp_path / "coauthor-1.0.0"
    shutil.copytree(built["out"] / "coauthor-1.0.0", copy)
    with_key = ["verify", str(copy), "--key", str(built["key"].path)]
    assert CliRunner().invoke(release, with_key).exit_code == 0
    (copy / "CHANGELOG.md").write_text((copy / "CHANGELOG.md").read_text() + f"\nsee {SMALLEST}\n")
    write_sums(copy)
    assert CliRunner().invoke(release, ["verify", str(copy)]).exit_code == 0  # needs the key
    result = CliRunner().invoke(release, with_key)
    assert result.exit_code == 1
    assert "CHANGELOG.md line" in result.output and "study session id" in result.output


def test_withdraw_records_once_and_accepts_a_pseudonym(built, tmp_path):
    key = init_keyfile(tmp_path / "k")
    first = CliRunner().invoke(
        withdraw, [WORKER, "--key", str(key.path), "--reason", "email of 3 May"]
    )
    assert first.exit_code == 0 and "Recorded the withdrawal" in first.output
    again = CliRunner().invoke(withdraw, [f" {WORKER} ", "--key", str(key.path)])
    assert "Already withdrawn" in again.output
    assert [w.worker_id for w in load_withdrawals(key)] == [WORKER]
    assert WORKER.encode() not in withdrawals_path(key).read_bytes()

    alias = pseudonym(built["key"], WORKER, "coauthor")
    by_alias = CliRunner().invoke(withdraw, [alias, "--key", str(built["key"].path)])
    assert by_alias.exit_code == 0, by_alias.output
    assert [w.worker_id for w in load_withdrawals(built["key"])] == [WORKER]
    unknown = CliRunner().invoke(withdraw, ["w" + "1" * 20, "--key", str(built["key"].path)])
    assert unknown.exit_code == 1 and "no release built with" in unknown.output


def test_diff_as_json(built):
    directory = built["out"] / "coauthor-1.0.0"
    result = CliRunner().invoke(
        release, ["diff", str(directory), str(built["out"] / "coauthor-1.0.0.tar.gz"), "--json"]
    )
    assert result.exit_code == 0
    assert json.loads(result.output) | {} == {
        "old": "coauthor 1.0.0", "new": "coauthor 1.0.0", "added": [], "removed": [], "changed": [],
        "files_added": [], "files_removed": [], "files_changed": [], "arms": [], "columns_added": [],
        "columns_removed": [], "rekeyed": False, "layout_changed": False, "license": [],
    }  # fmt: skip


def test_the_groups_plug_into_the_main_command():
    main = click.Group("study")
    for command in (keys, release, withdraw):
        main.add_command(command)
    result = CliRunner().invoke(main, ["--help"])
    assert all(name in result.output for name in ("keys", "release", "withdraw"))
    result = CliRunner().invoke(main, ["release", "--help"])
    assert all(name in result.output for name in ("build", "verify", "diff"))


def test_a_damaged_previous_archive_stops_the_build_with_its_name_not_a_traceback(tmp_path):
    """Only the archive of 1.0.0 is kept, and it was cut short by a failed copy."""
    key = init_keyfile(tmp_path / "study.key")
    source = copy_source(tmp_path / "coauthor", [SMALLEST])
    out = tmp_path / "out"
    args = ["build", str(source), "--out", str(out), "--key", str(key.path), "-j", "1"]
    assert CliRunner().invoke(release, [*args, "--version", "1.0.0"]).exit_code == 0
    archive = out / "coauthor-1.0.0.tar.gz"
    archive.write_bytes(archive.read_bytes()[:200])
    (out / "coauthor-1.0.0").rename(tmp_path / "moved-away")

    result = CliRunner().invoke(release, [*args, "--version", "1.0.1"])

    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), repr(result.exception)  # a message, no traceback
    assert f"Error: {archive}: not a readable tar.gz archive" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["coauthor-1.0.0.tar.gz"]


def test_a_withdrawal_that_matches_no_writer_is_pointed_out_at_the_build(tmp_path):
    # A worker id mistyped in `study withdraw` is recorded as given and leaves nothing out: the
    # writer who asked to withdraw would be published. The build says so, without the id.
    key = init_keyfile(tmp_path / "study.key")
    source = copy_source(tmp_path / "coauthor", [SMALLEST])
    typo = WORKER[:-1] + "H"
    recorded = CliRunner().invoke(withdraw, [typo, "--key", str(key.path), "--reason", "email of 3 May"])
    assert recorded.exit_code == 0, recorded.output

    result = CliRunner().invoke(
        release, ["build", str(source), "--version", "1.0.0", "--out", str(tmp_path / "out"),
                  "--key", str(key.path), "-j", "1"],
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert "1 recorded withdrawal matches no writer" in result.output
    assert "email of 3 May" in result.output and typo not in result.output


def test_withdrawing_a_worker_no_release_holds_says_so_at_once(built, tmp_path):
    # The id is mistyped the day the writer asks; the warning must not wait for the next build,
    # weeks later, when nobody remembers the e-mail.
    typo = WORKER[:-1] + "H"
    mistyped = CliRunner().invoke(withdraw, [typo, "--key", str(built["key"].path)])
    assert mistyped.exit_code == 0, mistyped.output
    assert "Recorded the withdrawal" in mistyped.output
    assert "no release built with" in mistyped.output and "case-sensitive" in mistyped.output

    other_writer = "AFXYOGWOLRAFK6"  # wrote 88daaed5, released in the fixture's 1.0.0
    released_writer = CliRunner().invoke(withdraw, [other_writer, "--key", str(built["key"].path)])
    assert released_writer.exit_code == 0, released_writer.output
    assert "Recorded the withdrawal" in released_writer.output
    assert "no release built with" not in released_writer.output


@pytest.mark.parametrize("given", [WORKER.lower(), f"{WORKER[:5]} {WORKER[5:]}"], ids=["case", "space"])
def test_a_withdrawal_given_in_another_case_or_spacing_names_the_writer_and_stops_the_build(tmp_path, given):
    # The writer asked to withdraw, the curator typed the id from an e-mail: recorded as typed, it
    # matched nobody and the next release published the writer's sessions with a warning.
    key = init_keyfile(tmp_path / "study.key")
    source = copy_source(tmp_path / "coauthor", [SMALLEST, "88daaed513824fbd9c77746eec7862d9"])
    out = tmp_path / "out"
    args = ["build", str(source), "--out", str(out), "--key", str(key.path), "-j", "1"]
    assert CliRunner().invoke(release, [*args, "--version", "1.0.0"]).exit_code == 0

    recorded = CliRunner().invoke(withdraw, [given, "--key", str(key.path), "--reason", "email of 3 May"])
    assert recorded.exit_code == 0, recorded.output
    assert f"A release holds '{WORKER}': if that is who withdrew, run: study withdraw {WORKER}" in recorded.output

    refused = CliRunner().invoke(release, [*args, "--version", "1.0.1"])
    assert refused.exit_code == 1, refused.output
    assert "1 recorded withdrawal(s) match a writer" in refused.output and "only in another case or spacing" in refused.output
    assert "email of 3 May" in refused.output and "Nothing was released" in refused.output
    assert WORKER not in refused.output  # ids stay with the key, out of build logs
    assert not (out / "coauthor-1.0.1").exists()

    assert CliRunner().invoke(withdraw, [WORKER, "--key", str(key.path)]).exit_code == 0
    built = CliRunner().invoke(release, [*args, "--version", "1.0.1"])
    assert built.exit_code == 0, built.output
    assert "Left out 1 session(s) of withdrawn writers" in built.output


def test_building_a_version_again_is_refused_with_the_versions_that_may_follow(built):
    again = CliRunner().invoke(release, [
        "build", str(built["source"]), "--version", "1.0.0", "--out", str(built["out"]),
        "--key", str(built["key"].path), "-j", "1",
    ])  # fmt: skip
    assert again.exit_code == 1
    output = " ".join(again.output.split())
    assert "coauthor 1.0.0 already exists" in output and "a release is never overwritten" in output
    assert ("Build the next version: --version 1.0.1 for corrections or a withdrawal, 1.1.0 when "
            "sessions, columns or files are added, 2.0.0 when any are removed or renamed") in output
