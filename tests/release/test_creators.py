"""Who created the dataset and who funded it: the curator declares them before the build
([release] in study.toml, or --creator and --funding), since an edited card fails verification."""

from __future__ import annotations

import json

from click.testing import CliRunner

from study.curation.formats import read_session
from study.curation.replay import replay
from study.release.cli import release
from study.release.keys import init_keyfile
from tests.release.conftest import SMALLEST, copy_source
from tests.release.test_contact import a_study, build, one_session

CREATOR = "Ada Lovelace (Example University, ada.lovelace@uni.example.edu)"
CREATOR_EMAIL = "ada.lovelace@uni.example.edu"
SECOND = "Charles Babbage (Example University)"
FUNDING = "NSF grant IIS-2112633"
QUESTION = "**Who created it, and who funded it?**"


def declare(folder, section: str) -> None:
    toml = folder / "study.toml"
    toml.write_text(toml.read_text() + "\n" + section)


def motivation(directory) -> str:
    return (directory / "README.md").read_text().split("## Motivation", 1)[1].split("## ", 1)[0]


def test_declared_creators_and_funding_answer_the_card_and_datapackage_and_verify_passes(tmp_path):
    folder = a_study(tmp_path, declared=True)
    declare(folder, f'[release]\ncreators = ["{CREATOR}", "{SECOND}"]\nfunding = "{FUNDING}"\n')
    # A writer types a creator's name and address: the name is not personal data the toolkit
    # detects, the address is redacted like anyone's.
    one_session(folder, f" Ada Lovelace wrote to me from {CREATOR_EMAIL} today.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    answer = motivation(directory)
    assert f"{QUESTION} Created by {CREATOR}; {SECOND}. Funded by {FUNDING}." in answer
    assert "Not known to the toolkit" not in answer
    package = json.loads((directory / "datapackage.json").read_text())
    assert package["contributors"][:3] == [
        {"title": CREATOR, "role": "author"},
        {"title": SECOND, "role": "author"},
        {"title": FUNDING, "role": "funder"},
    ]
    assert package["contributors"][3]["role"] == "contact"
    written = replay(read_session(next((directory / "sessions").glob("*.jsonl"))).events).text
    assert "Ada Lovelace wrote to me from <EMAIL" in written and CREATOR_EMAIL not in written
    verified = CliRunner().invoke(release, ["verify", str(directory)])
    assert verified.exit_code == 0, verified.output


def test_without_a_release_section_the_card_keeps_the_curators_note(tmp_path):
    folder = a_study(tmp_path, declared=True)
    one_session(folder, " A story.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    assert f"{QUESTION} _Not known to the toolkit: the curator fills this in" in motivation(directory)
    package = json.loads((directory / "datapackage.json").read_text())
    assert [c["role"] for c in package["contributors"]] == ["contact"]


def test_a_creators_value_of_the_wrong_kind_is_refused_naming_the_key(tmp_path):
    folder = a_study(tmp_path, declared=True)
    declare(folder, f'[release]\ncreators = "{SECOND}"\n')

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code != 0
    assert "study.toml: release.creators:" in result.output and "is not of type 'array'" in result.output
    assert 'Fix: set it to a list of who created the dataset' in result.output
    assert not directory.exists()


def test_an_unknown_key_of_the_release_section_is_refused_with_the_keys_it_allows(tmp_path):
    folder = a_study(tmp_path, declared=True)
    declare(folder, f'[release]\nauthors = ["{SECOND}"]\n')

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code != 0
    assert "unknown key 'authors' in [release]" in result.output
    assert "allowed: creators, funding" in result.output


def test_a_folder_of_sessions_declares_them_with_the_build_options(tmp_path):
    source = copy_source(tmp_path / "source", [SMALLEST])
    key = init_keyfile(tmp_path / "folder.key")
    out = tmp_path / "releases"
    args = ["build", str(source), "--version", "1.0.0", "--out", str(out), "--key", str(key.path), "-j", "1",
            "--creator", CREATOR, "--funding", FUNDING]  # fmt: skip

    result = CliRunner().invoke(release, args)

    assert result.exit_code == 0, result.output
    assert "Who created it" not in result.output  # nothing to warn about
    directory = out / "source-1.0.0"
    assert f"{QUESTION} Created by {CREATOR}. Funded by {FUNDING}." in motivation(directory)
    package = json.loads((directory / "datapackage.json").read_text())
    assert package["contributors"] == [{"title": CREATOR, "role": "author"}, {"title": FUNDING, "role": "funder"}]
    verified = CliRunner().invoke(release, ["verify", str(directory)])
    assert verified.exit_code == 0, verified.output


def test_a_folder_built_without_them_is_told_the_options_not_to_edit_the_card(tmp_path):
    # The card's note says the curator fills it in; an edited card fails verify (SHA256SUMS), so
    # the build names the options and the version to build with them.
    source = copy_source(tmp_path / "source", [SMALLEST])
    key = init_keyfile(tmp_path / "folder.key")
    args = ["build", str(source), "--version", "1.0.0", "--out", str(tmp_path / "releases"),
            "--key", str(key.path), "-j", "1", "--license", "cc-by-4.0"]  # fmt: skip

    result = CliRunner().invoke(release, args)

    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert 'Warning: the card answers "Who created it, and who funded it?" with "Not known to the toolkit"' in output
    assert "an edited card fails `study release verify`" in output
    assert "Fix: build 1.0.1 before publishing with --creator NAME (repeatable) and --funding TEXT" in output


def test_an_empty_creator_option_is_refused_before_anything_is_read(tmp_path):
    source = copy_source(tmp_path / "source", [SMALLEST])
    key = init_keyfile(tmp_path / "folder.key")
    args = ["build", str(source), "--version", "1.0.0", "--out", str(tmp_path / "releases"),
            "--key", str(key.path), "--creator", " "]  # fmt: skip

    result = CliRunner().invoke(release, args)

    assert result.exit_code != 0
    assert "--creator ' ': give one person or group per --creator" in result.output
    assert not (tmp_path / "releases").exists()
