"""A real study's release: its consent page names the protocol director's e-mail and phone, as
review boards require, and the release publishes exactly that contact on purpose."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from study import config
from study import config_texts
from study.cli import write_study_files
from study.release.cli import release
from study.release.keys import init_keyfile
from study.server import create_app
from tests.conftest import COAUTHOR
from tests.release.conftest import SMALLEST
from tests.release.inject import Writer
from tests.release.test_build_study import WORKER, synced, take_part
from tests.server.flow import to_writing

DIRECTOR_EMAIL = "ada.lovelace@cs.example.edu"
DIRECTOR_PHONE = "(650) 723-2300"
CONSENT_LINE = f"Prof. Ada Lovelace, Computer Science, {DIRECTOR_EMAIL}, {DIRECTOR_PHONE}"


def a_study(tmp_path, *, declared: bool):
    folder = tmp_path / "study"
    replacements = {
        "min_seconds = 600": "min_seconds = 0",
        config_texts.CONSENT_CONTACT_PLACEHOLDER: CONSENT_LINE,
    }
    if declared:
        replacements['contact = ""'] = f'contact = "{CONSENT_LINE}"'
    write_study_files(folder, replacements=replacements)
    return folder


def one_session(folder, typed: str) -> None:
    """A synced MTurk worker writes one session (typing `typed`) and answers the survey."""
    app = create_app(config.load(folder), suggestion_engine=object())
    client = app.test_client()
    events = [
        json.loads(line)
        for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()
    ]
    writer = Writer(events)
    writer.type(typed)
    entry = {"workerId": WORKER, "assignmentId": "3ASSIGN1", "hitId": "3HIT1",
             "turkSubmitTo": "https://workersandbox.mturk.com"}  # fmt: skip
    session_id = client.get("/task", query_string=entry).location.split("/")[2]
    to_writing(client, session_id, prompt="audiobook")
    take_part(client, session_id, writer.events)
    synced(app, "3ASSIGN1", WORKER)


def build(folder, tmp_path, version="1.0.0"):
    key = init_keyfile(tmp_path / "study.key")
    out = tmp_path / "releases"
    args = ["build", str(folder), "--version", version, "--out", str(out), "--key", str(key.path),
            "-j", "1"]  # fmt: skip
    return CliRunner().invoke(release, args), out / f"coauthor-{version}", key


def test_a_release_publishes_the_declared_contact_and_still_redacts_what_writers_typed(tmp_path):
    folder = a_study(tmp_path, declared=True)
    # The writer types the director's address and a phone number of their own.
    one_session(folder, f" Ask {DIRECTOR_EMAIL} or ring me at (415) 555-2671.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    card = (directory / "README.md").read_text()
    assert f"**The study's contact, published on purpose.** {CONSENT_LINE}" in card
    assert DIRECTOR_EMAIL in card and DIRECTOR_PHONE in card  # the consent quote keeps them
    package = json.loads((directory / "datapackage.json").read_text())
    assert package["contributors"] == [{"title": CONSENT_LINE, "role": "contact"}]
    # What the writer typed is redacted, the director's address included: only the card and
    # datapackage.json carry the contact.
    for path in directory.rglob("*"):
        if path.is_file() and path.name not in ("README.md", "datapackage.json", "SHA256SUMS"):
            data = path.read_bytes()
            for secret in (DIRECTOR_EMAIL, "723-2300", "555-2671"):
                assert secret.encode() not in data, (path.name, secret)

    # A reader's `study release verify` (no study.toml at hand) passes and names the contact.
    verified = CliRunner().invoke(release, ["verify", str(directory)])
    assert verified.exit_code == 0, verified.output
    assert f"leak scan (the study's contact, published on purpose in README.md: {CONSENT_LINE})" in (
        verified.output
    )


def test_the_cards_maintenance_section_names_the_declared_contact(tmp_path):
    # Errata and withdrawal requests go to the contact; a card that says "the curator fills
    # this in" there, beside the declared contact, cannot be filled in without breaking
    # SHA256SUMS.
    folder = a_study(tmp_path, declared=True)
    one_session(folder, " A story.")
    result, directory, key = build(folder, tmp_path)
    assert result.exit_code == 0, result.output
    maintenance = (directory / "README.md").read_text().split("## Maintenance", 1)[1]
    assert f"**Contact:** {CONSENT_LINE}" in maintenance
    assert "Not known to the toolkit" not in maintenance
    assert CliRunner().invoke(release, ["verify", str(directory)]).exit_code == 0


def test_the_contact_is_published_in_the_card_only(tmp_path):
    folder = a_study(tmp_path, declared=True)
    one_session(folder, " A story.")
    result, directory, key = build(folder, tmp_path)
    assert result.exit_code == 0, result.output
    # Someone puts the director's address into a released table: the scan still catches it.
    stats = directory / "stats.csv"
    lines = stats.read_text().splitlines()
    stats.write_text("\n".join(lines + [lines[-1].replace(lines[-1].split(",")[0], DIRECTOR_EMAIL, 1)]) + "\n")

    verified = CliRunner().invoke(release, ["verify", str(directory)])

    assert verified.exit_code != 0
    assert "stats.csv line" in verified.output and "email address" in verified.output


@pytest.mark.parametrize("named", [DIRECTOR_EMAIL, DIRECTOR_PHONE])
def test_a_consent_page_naming_an_undeclared_contact_is_refused_with_the_fix(tmp_path, named):
    folder = a_study(tmp_path, declared=True)
    toml = folder / "study.toml"
    # The declaration names only the other one of the two.
    other = DIRECTOR_PHONE if named == DIRECTOR_EMAIL else DIRECTOR_EMAIL
    toml.write_text(toml.read_text().replace(f'contact = "{CONSENT_LINE}"', f'contact = "{other}"'))
    one_session(folder, " A story.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code != 0
    assert "the consent page names" in result.output and repr(named) in result.output
    assert "[study] contact" in result.output and "Fix:" in result.output
    assert "Nothing was released" in result.output
    assert not (tmp_path / "releases" / "coauthor-1.0.0").exists()


def test_a_study_without_a_declared_contact_is_refused_before_anything_is_written(tmp_path):
    folder = a_study(tmp_path, declared=False)
    one_session(folder, " A story.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code != 0
    assert "study.toml's [study] contact does not declare" in result.output
    assert not directory.exists() and not list((tmp_path / "releases").glob("*.partial"))


def test_a_consent_page_still_holding_the_init_placeholder_is_refused_with_the_fix(tmp_path):
    # `study init`'s consent page, its contact line never filled in: the card would publish
    # "[REPLACE ...]" as the contact participants were given.
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    one_session(folder, " A story.")

    result, directory, key = build(folder, tmp_path)

    assert result.exit_code != 0
    assert f"{folder / 'study.toml'}: not releasing" in result.output
    assert "the consent page (consent.html) still says" in result.output
    assert config_texts.CONSENT_CONTACT_PLACEHOLDER in result.output
    assert "Fix: replace it with the protocol director's name" in result.output
    assert "Nothing was released" in result.output
    assert not directory.exists() and not list((tmp_path / "releases").glob("*.partial"))

    # Filled in (and declared), the same study is released, its card quoting the real contact.
    consent = folder / "consent.html"
    consent.write_text(consent.read_text().replace(config_texts.CONSENT_CONTACT_PLACEHOLDER, CONSENT_LINE))
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace('contact = ""', f'contact = "{CONSENT_LINE}"'))
    (tmp_path / "after").mkdir()

    result, directory, key = build(folder, tmp_path / "after")

    assert result.exit_code == 0, result.output
    card = (directory / "README.md").read_text()
    assert CONSENT_LINE in card and "[REPLACE" not in card
