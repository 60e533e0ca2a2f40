"""A release's card has one table of its conditions. From a study folder it is the table of the
conditions as the released sessions ran them (study.release.arms_as_run), which says all the
older table from metadata.csv said (genre, temperature, frequency penalty, sessions of each) and
agrees with the release's metadata.csv; from a folder of sessions (the CoAuthor release as
distributed: no study database) it is the table of metadata.csv's decoding settings."""

from __future__ import annotations

import csv
import json
from collections import Counter

from click.testing import CliRunner

from study.release.arms_as_run import NOT_RECORDED
from study.release.build import build_release
from study.release.cli import release
from tests.export.test_settings_as_run import served
from tests.release.conftest import copy_source, metadata_rows
from tests.export.served_as_run import a_study
from tests.release.test_card_as_run import build, card_rows

OLDER_TABLE = "**Conditions** (decoding settings of the suggestions):"


def settings_of(rows) -> Counter:
    """Sessions per (genre, temperature, frequency penalty)."""
    return Counter((r["genre"], r["temperature"], r["frequency_penalty"]) for r in rows)


def test_a_studys_card_has_one_table_of_its_conditions_as_they_ran(tmp_path, model_url):
    """One session of `creative-high` recorded no settings, one asked the model at 0.75, and one
    ran after study.toml raised the temperature to 0.9: the release's metadata.csv and the card's
    one table say each as it ran, and agree."""
    folder = a_study(tmp_path, model_url)
    served(folder)

    card, _ = build(folder, tmp_path)

    with open(tmp_path / "releases" / "coauthor-1.0.0" / "metadata.csv", newline="") as handle:
        released = settings_of(csv.DictReader(handle))
    assert released == Counter({("creative", "", ""): 1, ("creative", "0.75", "1"): 1, ("creative", "0.9", "0.5"): 1})
    assert OLDER_TABLE not in card
    assert card.count("| temperature |") == 1  # one table gives the conditions' decoding settings
    shown = Counter()
    for rows in card_rows(card).values():
        for row in rows:
            unknown = {key: "" if value == NOT_RECORDED else value for key, value in row.items()}
            shown[(row["genre"], unknown["temperature"], unknown["frequency penalty"])] += int(row["sessions"])
    assert shown == released


def test_a_release_of_a_folder_of_sessions_keeps_the_table_of_metadatas_settings(tmp_path, key):
    """The CoAuthor sessions as distributed: no study database says how they ran, so the card
    groups them by metadata.csv's genre and decoding settings, and has no table of arms."""
    first = {}
    for row in metadata_rows():
        first.setdefault((row["genre"], row["temperature"], row["frequency_penalty"]), row)
    source = copy_source(tmp_path / "coauthor", [row["session_id"] for row in first.values()])

    built = build_release(source, version="1.0.0", out=tmp_path / "releases", key_path=key.path, processes=1)

    card = (built.directory / "README.md").read_text(encoding="utf-8")
    table = card.split(OLDER_TABLE, 1)[1].lstrip("\n").split("\n\n", 1)[0]
    assert "| genre | temperature | frequency penalty | sessions |" in table
    assert "| creative | 0.75 | 1 | 1 |" in table and "| argumentative | 0.2 | 0.5 | 1 |" in table
    assert "| condition |" not in card


def test_a_release_of_a_folder_of_sessions_does_not_say_who_recorded_them(tmp_path, key):
    """The CoAuthor sessions as distributed were written in 2021 with CoAuthor's own interface:
    the card of a folder of sessions says their format, not that the writers used this toolkit's
    editor and server, which nothing in the folder records."""
    source = copy_source(tmp_path / "coauthor", [metadata_rows()[0]["session_id"]])

    built = build_release(source, version="1.0.0", out=tmp_path / "releases", key_path=key.path, processes=1)

    card = (built.directory / "README.md").read_text(encoding="utf-8")
    collection = card.split("## Collection process\n", 1)[1].split("**Over what timeframe?**")[0]
    assert "toolkit's editor" not in collection and "study server" not in collection
    assert collection.strip().startswith("The logs are in CoAuthor's format: the prompt is the initial text;")
    assert "does not say which editor or server recorded them" in collection


def test_a_folder_releases_card_says_what_summary_csvs_conditions_group(tmp_path, key):
    """summary.csv groups a folder's sessions by randomness, `high` and `low`, each pooling a
    setting of each genre: the card (and datapackage.json) say so, where they said "the decoding
    settings", of which the four sessions here have four."""
    first = {}
    for row in metadata_rows():
        first.setdefault((row["genre"], row["temperature"], row["frequency_penalty"]), row)
    source = copy_source(tmp_path / "coauthor", [row["session_id"] for row in first.values()])
    out = tmp_path / "releases"
    result = CliRunner().invoke(release, ["build", str(source), "--version", "1.0.0", "--out", str(out),
                                          "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output

    with open(out / "coauthor-1.0.0" / "summary.csv", newline="") as handle:
        groups = {r["group"]: r["sessions"] for r in csv.DictReader(handle) if r["grouping"] == "condition"}
    assert groups == {"high": "2", "low": "2", "combined": "4"}
    card = (out / "coauthor-1.0.0" / "README.md").read_text(encoding="utf-8")
    assert "temperature 0.75 or 0.9 is `high`, 0.3 or 0.2 `low`, both genres pooled" in card
    package = json.loads((out / "coauthor-1.0.0" / "datapackage.json").read_text())
    summary = next(r for r in package["resources"] if r["name"] == "summary")
    assert "high or low" in summary["description"] and "both genres pooled" in summary["description"]
