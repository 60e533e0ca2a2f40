"""The release's metadata in either layout: metadata.csv, or one sheet per genre as the public
CoAuthor release is distributed."""

from __future__ import annotations

import csv

import pytest

from study.curation.metadata_files import (
    MetadataError,
    find_metadata,
    read_metadata,
    read_metadata_files,
    session_logs,
)
from tests.official_layout import OFFICIAL_COLUMNS, lay_out_officially

from .conftest import DATA, metadata_rows


def test_per_genre_sheets_give_the_same_rows_as_metadata_csv(tmp_path):
    release = lay_out_officially(DATA, tmp_path / "release")
    found = find_metadata(release / "sessions")
    assert found.layout == "per-genre sheets" and found.folder == release.resolve()
    sheets = read_metadata_files(found)
    shipped = read_metadata(DATA / "metadata.csv")
    assert sheets.keys() == shipped.keys()
    for session_id, row in shipped.items():
        assert {k: sheets[session_id][k] for k in (*OFFICIAL_COLUMNS, "genre", "condition")} == \
            {k: row[k] for k in (*OFFICIAL_COLUMNS, "genre", "condition")}


def test_session_logs_are_found_in_one_folder_or_split_per_genre(tmp_path):
    for split in (False, True):
        release = lay_out_officially(DATA, tmp_path / f"release-{split}", split=split)
        assert sorted(p.name for p in session_logs(release)) == sorted(p.name for p in (DATA / "sessions").glob("*.jsonl"))


def test_metadata_csv_wins_over_the_sheets_and_a_row_without_genre_takes_its_prompts(tmp_path):
    rows = metadata_rows()
    with open(tmp_path / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=OFFICIAL_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    (tmp_path / "creative.csv").write_text("session_id\nnot-read\n")
    found = find_metadata(tmp_path)
    assert found.layout == "metadata.csv"
    read = read_metadata_files(found)
    # App. B's prompt lists give every shipped session its released genre.
    assert {s: r["genre"] for s, r in read.items()} == {r["session_id"]: r["genre"] for r in rows}


def test_a_session_in_both_sheets_is_named_with_both_places(tmp_path):
    (tmp_path / "creative.csv").write_text("session_id,prompt_code\nabc,pig\n")
    (tmp_path / "argumentative.csv").write_text("session_id,prompt_code\nxyz,news\nabc,news\n")
    with pytest.raises(MetadataError, match=r"creative.csv line 2"):
        read_metadata(tmp_path)


def test_a_sheet_without_its_header_says_how_to_export_it(tmp_path):
    (tmp_path / "creative.csv").write_text("8/26/2021 20:49:16,AFX64B913Y91KG,b5f8899b\n")
    with pytest.raises(MetadataError, match=r"creative.csv: no session_id column .*header row"):
        read_metadata(tmp_path / "creative.csv")


def test_a_sheet_that_is_not_utf8_names_the_byte(tmp_path):
    (tmp_path / "argumentative.csv").write_bytes(b"session_id,prompt_code\nab\xe9,news\n")
    with pytest.raises(MetadataError, match=r"argumentative.csv: not UTF-8 .*CSV UTF-8"):
        read_metadata(tmp_path)
