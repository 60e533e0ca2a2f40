"""Stats rows agree with the released metadata; summaries group like Table 3; rows stream to
CSV and Parquet."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from study.curation.formats import read_session
from study.curation.metadata_files import read_metadata
from study.curation.stats import (
    COLUMNS,
    RowWriter,
    Summary,
    condition_of,
    session_stats,
)

from .conftest import DATA, SESSIONS, metadata_rows

ROWS = metadata_rows()


@pytest.fixture(scope="module")
def stats_rows():
    return [session_stats(read_session(SESSIONS / f"{row['session_id']}.jsonl")) for row in ROWS]


def test_rows_have_every_column(stats_rows):
    for row in stats_rows:
        assert set(COLUMNS) <= set(row)


def test_official_columns_agree_with_metadata_csv(stats_rows):
    for expected, row in zip(ROWS, stats_rows, strict=True):
        for column in (
            "num_event",
            "num_query",
            "num_selected",
            "perc_selected",
            "num_cursor",
            "written_by_human",
        ):
            assert row[column] == int(expected[column]), (expected["session_id"], column)
        assert row["time"] == float(expected["time"])


def test_block_counts_and_scores_are_consistent(stats_rows):
    for row in stats_rows:
        assert row["blocks_choose"] == row["num_selected"]
        if row["blocks_insert"] + row["blocks_choose"]:
            assert 0 <= row["equality"] <= 1
        assert 0 <= row["mutuality"] <= 1
        assert 0 < row["distinct_2"] <= 1
        assert 0 <= row["writer_share_final"] <= 100


def test_condition_is_the_papers_randomness_setting():
    assert condition_of("0.9", "0.5") == "high" and condition_of(0.2, 0.5) == "low"
    assert condition_of("0.75", "1") == "high" and condition_of("0.3", "0") == "low"
    assert condition_of("0.5", "0.5") == "T=0.5 FP=0.5"
    assert condition_of("", None) == "unknown"


@pytest.mark.parametrize("by", ["genre", "condition", "prompt", "writer"])
def test_summary_groups_sessions_and_ends_with_combined(stats_rows, by):
    summary = Summary(by, read_metadata(DATA / "metadata.csv"))
    for row in stats_rows:
        summary.add(row)
    table = summary.table()
    assert table[-1][by] == "combined" and table[-1]["sessions"] == 31
    assert sum(entry["sessions"] for entry in table[:-1]) == 31
    combined = table[-1]
    assert combined["queries"] == pytest.approx(sum(r["num_query"] for r in stats_rows) / 31)


def test_genre_summary_splits_creative_and_argumentative(stats_rows):
    summary = Summary("genre", read_metadata(DATA / "metadata.csv"))
    for row in stats_rows:
        summary.add(row)
    groups = {entry["genre"]: entry for entry in summary.table()}
    assert set(groups) == {"argumentative", "creative", "combined"}
    assert groups["argumentative"]["sessions"] == 16 and groups["creative"]["sessions"] == 15


def test_sessions_without_metadata_are_grouped_apart(stats_rows):
    summary = Summary("genre", {})
    summary.add(stats_rows[0])
    assert summary.table()[0]["genre"] == "(no metadata)"
    with pytest.raises(ValueError, match="cannot group by"):
        Summary("colour", {})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_row_writer_round_trips(tmp_path, stats_rows, suffix):
    path = tmp_path / f"stats{suffix}"
    with RowWriter(path) as writer:
        for row in stats_rows:
            writer.write(row)
    frame = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 31
    assert frame["num_query"].tolist() == [row["num_query"] for row in stats_rows]
    assert frame["equality"].tolist() == pytest.approx(
        [row["equality"] for row in stats_rows], nan_ok=True
    )


def test_empty_parquet_still_has_the_columns(tmp_path):
    path = tmp_path / "empty.parquet"
    RowWriter(path).close()
    assert list(pd.read_parquet(path).columns) == list(COLUMNS)


def test_nan_scores_are_skipped_in_means():
    summary = Summary("genre", {"s": {"genre": "creative"}})
    summary.add({"session_id": "s", "equality": math.nan, "time": 2.0})
    entry = summary.table()[0]
    assert math.isnan(entry["equality"]) and entry["time (min)"] == 2.0


def test_acceptance_counts_sessions_without_queries_as_zero_like_table3_and_labels_the_other_reading():
    """The paper's Table 3 acceptance is the mean of the release's perc_selected, 0 for a
    session without a query (issue 20); the mean over queried sessions is a separate column."""
    summary = Summary("genre", {})
    summary.add({"session_id": "a", "num_query": 4, "perc_selected": 50})
    summary.add({"session_id": "b", "num_query": 0, "perc_selected": 0})
    combined = summary.table()[-1]
    assert combined["acceptance (%)"] == 25 and combined["queries"] == 2
    assert combined["acceptance, queried sessions (%)"] == 50
