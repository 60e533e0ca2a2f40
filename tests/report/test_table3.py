"""A researcher reproduces CoAuthor's Table 3 from the public release with one command."""

from __future__ import annotations

import csv
import shutil

import pytest
from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.official_layout import lay_out_officially
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
    genres = ("creative", "argumentative", "combined")
    summary = {line.split()[0]: line.split()[1:] for line in curated.output.splitlines()
               if line.split()[:1] and line.split()[0] in genres}  # fmt: skip
    ours = _rows(CliRunner().invoke(main, ["report", "--table3", str(COAUTHOR / "sessions")]).output)
    for genre in genres:
        sessions, time, length, queries, acceptance, share = summary[genre][:6]
        queried = summary[genre][-1]  # the summary's last column: acceptance, queried sessions
        assert ours[(genre, "ours")][2:] == [sessions, time, length, queries, acceptance, share, queried]


def test_the_html_report_carries_table3_too(tmp_path):
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(out)]).exit_code == 0
    rows = Tables(out.read_text()).sections["table3"][0]
    # the paper gives one reading of acceptance; the last column (queried sessions only) is ours
    assert ["combined", "paper", "20", "63", "1445", "11.2", "418", "11.8", "72.3", "72.6", "–"] in rows


def test_table3_without_metadata_says_what_it_needs(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    result = CliRunner().invoke(main, ["report", "--table3", str(tmp_path)])
    assert result.exit_code != 0 and "needs the release's metadata" in result.output
    assert "creative.csv or argumentative.csv" in result.output


def _mean(values) -> str:
    values = list(values)
    return f"{sum(values) / len(values):.1f}"


def test_acceptance_is_the_papers_mean_of_perc_selected_and_the_queried_reading_is_labelled():
    """Table 3's acceptance is the mean of the release's perc_selected over every session (0 for
    a session without a query, as the release writes it); the last column leaves those out."""
    rows = _rows(CliRunner().invoke(main, ["report", "--table3", str(COAUTHOR)]).output)
    metadata = list(csv.DictReader(open(COAUTHOR / "metadata.csv")))
    assert any(r["num_query"] == "0" for r in metadata)  # the sample has such a session
    for genre in ("creative", "argumentative", "combined"):
        mine = [r for r in metadata if genre in ("combined", r["genre"])]
        acceptance, _, queried = rows[(genre, "ours")][6:9]
        assert acceptance == _mean(int(r["perc_selected"]) for r in mine)
        assert queried == _mean(int(r["perc_selected"]) for r in mine if r["num_query"] != "0")
    assert rows[("argumentative", "ours")][6] != rows[("argumentative", "ours")][8]


@pytest.mark.parametrize("split", [False, True], ids=["one-folder", "split-per-genre"])
def test_table3_reads_the_release_as_distributed(tmp_path, split):
    """creative.csv and argumentative.csv (no genre column) with the logs beside them give the
    same Table 3 as the shipped metadata.csv, and the output says which layout was read."""
    release = lay_out_officially(COAUTHOR, tmp_path / "coauthor-v1.0", split=split)
    result = CliRunner().invoke(main, ["report", "--table3", str(release)])
    assert result.exit_code == 0, result.output
    assert "per-genre sheets creative.csv and argumentative.csv" in result.output
    assert _rows(result.output) == _rows(CliRunner().invoke(main, ["report", "--table3", str(COAUTHOR)]).output)
    # pointing at the sessions folder finds the sheets one folder up
    inner = CliRunner().invoke(main, ["report", "--table3", str(release / "sessions")])
    assert inner.exit_code == 0, inner.output
    assert _rows(inner.output)[("creative", "ours")][2] == "15"


def test_the_html_report_reads_the_release_as_distributed_and_says_so(tmp_path):
    release = lay_out_officially(COAUTHOR, tmp_path / "release", split=True)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "per-genre sheets" in result.output
    tables = Tables(out.read_text())
    assert "per-genre sheets creative.csv and argumentative.csv" in tables.texts["overview"]
    overview = tables.rows("overview")
    assert overview["genre: creative"] == ["15"] and overview["genre: argumentative"] == ["16"]
    assert overview["sessions with a log"] == ["31"]


def test_curate_stats_summary_reads_the_per_genre_sheets(tmp_path):
    release = lay_out_officially(COAUTHOR, tmp_path / "release", split=True)
    for extra in ([], ["--metadata", str(release / "creative.csv")]):  # found, or named
        result = CliRunner().invoke(
            main, ["curate", "stats", str(release / "sessions" / "creative"),
                   str(release / "sessions" / "argumentative"), "--summary", "genre",
                   "--out", str(tmp_path / "stats.csv"), *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "per-genre sheets creative.csv and argumentative.csv" in result.stderr
        sessions = {line.split()[0]: line.split()[1] for line in result.output.splitlines()
                    if line.split()[:1] and line.split()[0] in ("creative", "argumentative")}
        assert sessions == {"creative": "15", "argumentative": "16"}


def test_table3_of_a_study_folder_counts_its_finished_sessions(report_study):
    result = CliRunner().invoke(main, ["report", "--table3", str(report_study)])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows[("creative", "ours")][:3] == ["3", "3", "3"]  # 3 prompts, 3 writers, 3 sessions
    assert "3 finished sessions of the study" in result.output


def test_table3_reads_the_sessions_on_the_cores_it_is_given(monkeypatch):
    # `-j 1` on a shared machine: Table 3's sessions are measured on one core, not on all.
    from study.curation import runner

    asked = []
    real = runner.stats_paths
    monkeypatch.setattr(runner, "stats_paths", lambda *a, **options: asked.append(options) or real(*a, **options))
    result = CliRunner().invoke(main, ["report", "--table3", "-j", "1", str(COAUTHOR)])
    assert result.exit_code == 0, result.output
    assert asked == [{"processes": 1}]


def test_table3_without_worker_ids_says_writers_are_not_counted_rather_than_zero(tmp_path):
    # A curator's metadata.csv that lost its worker_id column: the sessions are still measured,
    # but the writers cannot be counted, and "0 writers" would read as a finding.
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "sessions").symlink_to(COAUTHOR / "sessions")
    with open(COAUTHOR / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, [c for c in rows[0] if c != "worker_id"],
                                extrasaction="ignore")  # fmt: skip
        writer.writeheader()
        writer.writerows(rows)
    result = CliRunner().invoke(main, ["report", "--table3", str(folder)])
    assert result.exit_code == 0, result.output
    table = _rows(result.output)
    for genre in ("creative", "argumentative", "combined"):
        assert table[(genre, "ours")][1] == "–"
    assert table[("combined", "ours")][2] == "31"
    assert "writers: not counted" in result.output and "worker_id" in result.output



# The two commands that read a release's metadata beside its sessions: Table 3, and the
# curation core's summary that Table 3's means come from.
BOTH_READERS = pytest.mark.parametrize(
    "command", [["report", "--table3"], ["curate", "stats", "--summary", "genre"]]
)


def _read(command: list[str], sessions, tmp_path):
    """Run a reader on a sessions folder (Table 3 on the folder holding it)."""
    args = [*command, str(sessions.parent if command[0] == "report" else sessions)]
    if command[0] == "curate":
        args += ["--out", str(tmp_path / "stats.csv")]
    return CliRunner().invoke(main, args)

@BOTH_READERS
def test_a_metadata_csv_cut_short_is_refused_with_its_last_line_not_read_as_a_row_without_a_writer(
    tmp_path, command
):  # fmt: skip
    # A copy that stopped inside the last row: read as it was, that session lost its
    # worker_id and genre and the counts changed without a word.
    folder = tmp_path / "release"
    folder.mkdir()
    shutil.copytree(COAUTHOR / "sessions", folder / "sessions")
    data = (COAUTHOR / "metadata.csv").read_bytes()
    (folder / "metadata.csv").write_bytes(data[: data.rstrip().rfind(b",", 0, len(data) - 60)])
    lines = (folder / "metadata.csv").read_bytes().count(b"\n") + 1
    result = _read(command, folder / "sessions", tmp_path)
    assert result.exit_code == 1, result.output
    assert f"{folder / 'metadata.csv'} line {lines}:" in result.output
    assert "where the header has 14. Fix: give every row one cell per column" in result.output


@BOTH_READERS
def test_sessions_linked_from_elsewhere_read_the_metadata_beside_the_link(tmp_path, command):
    # A curator spares a copy of a large release: sessions/ is a link to the logs, beside their
    # own edited metadata.csv. That metadata is the one to read, not the one beside the logs.
    folder = tmp_path / "curated"
    folder.mkdir()
    (folder / "sessions").symlink_to(COAUTHOR / "sessions")
    shutil.copy(COAUTHOR / "metadata.csv", folder / "metadata.csv")
    args = [*command, str(folder / "sessions")]
    if command[0] == "curate":
        args += ["--out", str(tmp_path / "stats.csv")]
    result = CliRunner().invoke(main, args)  # the sessions folder itself, for both
    assert result.exit_code == 0, result.output
    assert str(folder / "metadata.csv") in result.output
    assert str(COAUTHOR / "metadata.csv") not in result.output


@pytest.mark.parametrize("table3", [["--table3"], []])
def test_a_release_archive_given_as_source_says_to_unpack_it(tmp_path, table3):
    # The .tar.gz is what a release is downloaded as, and what `study release verify` takes.
    archive = tmp_path / "coauthor-1.0.0.tar.gz"
    archive.write_bytes(b"\x1f\x8b")
    result = CliRunner().invoke(main, ["report", *table3, str(archive), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert f"unpack it first (`tar xzf {archive}`) and give its folder" in result.output
    assert not (tmp_path / "r.html").exists()


@BOTH_READERS
def test_a_metadata_csv_saved_with_semicolons_is_told_to_be_saved_with_commas(tmp_path, command):
    folder = tmp_path / "release"
    shutil.copytree(COAUTHOR / "sessions", folder / "sessions")
    (folder / "metadata.csv").write_bytes((COAUTHOR / "metadata.csv").read_bytes().replace(b",", b";"))
    result = _read(command, folder / "sessions", tmp_path)
    assert result.exit_code == 1, result.output
    assert f"{folder / 'metadata.csv'} line 1: the cells are separated by ';', not commas" in result.output
    assert "no session_id column" not in result.output
