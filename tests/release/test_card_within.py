"""A within-subjects study's release card says its sessions come in sets, one per arm for each
writer, in a Latin square's order: without it a reader of metadata.csv would compare the arms as
independent groups."""

from __future__ import annotations

from click.testing import CliRunner

from study.release.cli import release
from study.release.keys import init_keyfile
from tests.server.study_edits import dhillon_study, serve_again, write_part


def _card(folder, tmp_path) -> str:
    key = init_keyfile(tmp_path / "study.key")
    result = CliRunner().invoke(release, ["build", str(folder), "--version", "1.0.0", "--out",
                                          str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return (tmp_path / "releases" / "dhillon-1.0.0" / "README.md").read_text(encoding="utf-8")


def test_the_card_of_a_within_subjects_study_says_each_writer_wrote_in_every_arm(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    for first in (True, False, False):
        write_part(client, "lab-writer-1", first=first)

    card = _card(folder, tmp_path)

    assert "**Arms were assigned within subjects:**" in card
    assert "Latin square" in card and "paired" in card
