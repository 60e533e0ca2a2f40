"""The licence a curator gives a release (`study release build --license`): without one the card
says "other", which grants no reuse, so the build says so with the fix; a licence given in a
later version is what its diff and CHANGELOG say changed."""

from __future__ import annotations

import json

from click.testing import CliRunner

from study.release.cli import release
from tests.release.conftest import SMALLEST, copy_source


def _build(source, out, key, version, *options):
    result = CliRunner().invoke(
        release, ["build", str(source), "--version", version, "--out", str(out), "--key",
                  str(key.path), "-j", "1", *options],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def test_a_release_without_a_licence_is_told_the_fix_and_a_licence_added_later_is_in_its_changelog(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [SMALLEST])
    out = tmp_path / "releases"

    first = _build(source, out, key, "1.0.0")
    assert 'Warning: no --license, so the card and datapackage.json give the licence as "other"' in first
    assert "--license cc-by-4.0" in first and "build 1.0.1 with it before publishing" in first
    assert "**License:** other." in (out / "coauthor-1.0.0" / "README.md").read_text()

    second = _build(source, out, key, "1.0.1", "--license", "cc-by-4.0")
    assert "Warning: no --license" not in second
    changelog = (out / "coauthor-1.0.1" / "CHANGELOG.md").read_text()
    assert "- Licence: `other` -> `cc-by-4.0`." in changelog
    assert "Documentation only" not in changelog.split("## [1.0.0]")[0]

    diff = CliRunner().invoke(release, ["diff", str(out / "coauthor-1.0.0"), str(out / "coauthor-1.0.1")])
    assert diff.exit_code == 0, diff.output
    assert "licence: other -> cc-by-4.0" in diff.output
    as_json = CliRunner().invoke(release, ["diff", str(out / "coauthor-1.0.0"), str(out / "coauthor-1.0.1"), "--json"])
    assert json.loads(as_json.output)["license"] == ["other", "cc-by-4.0"]


def test_other_given_on_purpose_is_not_warned_about(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [SMALLEST])
    output = _build(source, tmp_path / "releases", key, "1.0.0", "--license", "other")
    assert "Warning: no --license" not in output
