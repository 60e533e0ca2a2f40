"""A researcher reproduces CoAuthor's Table 3 from the public release with one command."""

from __future__ import annotations

import csv

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.report.conftest import Tables


def _rows(output: str) -> dict[tuple[str, str], list[str]]:
    lines = [line.split() for line in output.splitlines() if line.split()[:1]]
    return {(cells[0], cells[1]): cells[2:] for cells in lines if cells[1] in ("ours", "paper")}


def test_table3_prints_ours_beside_the_papers_rows():
    result = CliRunner().invoke(main, ["report", "--table3", str(COAUTHOR)])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows[("combined", "paper")] == ["20", "63", "1445", "11.2", "418", "11.8", "72.3", "72.6"]
    assert rows[("creative", "paper")][:3] == ["10", "58", "830"]
    metadata = list(csv.DictReader(open(COAUTHOR / "metadata.csv")))
    for genre in ("creative", "argumentative"):
        mine = [r for r in metadata if r["genre"] == genre]
        assert rows[(genre, "ours")][:3] == [
            str(len({r["prompt_code"] for r in mine})), str(len({r["worker_id"] for r in mine})),
            str(len(mine)),
        ]  # fmt: skip
    # time (min) is the metadata's own `time`, averaged
    mean_time = sum(float(r["time"]) for r in metadata) / len(metadata)
    assert rows[("combined", "ours")][3] == f"{mean_time:.1f}"


def test_table3_means_are_the_curation_cores_summary(tmp_path):
    curated = CliRunner().invoke(
        main, ["curate", "stats", str(COAUTHOR / "sessions"), "--summary", "genre",
               "--out", str(tmp_path / "stats.csv")],
    )  # fmt: skip
    summary = {line.split()[0]: line.split()[1:] for line in curated.output.splitlines()[1:4]}
    ours = _rows(CliRunner().invoke(main, ["report", "--table3", str(COAUTHOR / "sessions")]).output)
    for genre in ("creative", "argumentative", "combined"):
        sessions, time, length, queries, acceptance, share = summary[genre][:6]
        assert ours[(genre, "ours")][2:] == [sessions, time, length, queries, acceptance, share]


def test_the_html_report_carries_table3_too(tmp_path):
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(out)]).exit_code == 0
    rows = Tables(out.read_text()).sections["table3"][0]
    assert ["combined", "paper", "20", "63", "1445", "11.2", "418", "11.8", "72.3", "72.6"] in rows


def test_table3_without_metadata_says_what_it_needs(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    result = CliRunner().invoke(main, ["report", "--table3", str(tmp_path)])
    assert result.exit_code != 0 and "needs the release's metadata" in result.output


def test_table3_of_a_study_folder_counts_its_finished_sessions(report_study):
    result = CliRunner().invoke(main, ["report", "--table3", str(report_study)])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows[("creative", "ours")][:3] == ["3", "3", "3"]  # 3 prompts, 3 writers, 3 sessions
    assert "3 finished sessions of the study" in result.output
