"""Source CSV files as spreadsheets and people write them: a byte-order mark, long answers,
bad bytes and ragged rows are read or reported with the file and line, never a traceback."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from study.release.build import build_release
from study.release.cli import release
from study.release.source import SourceError, open_source
from study.release.verify import verify
from tests.release.conftest import SMALLEST, copy_source, released

OTHER = "88daaed513824fbd9c77746eec7862d9"


@pytest.fixture
def source(tmp_path):
    return copy_source(tmp_path / "coauthor", [SMALLEST, OTHER])


def build(source, key, tmp_path):
    return CliRunner().invoke(
        release,
        ["build", str(source), "--version", "1.0.0", "--out", str(tmp_path / "out"),
         "--key", str(key.path), "-j", "1"],
    )  # fmt: skip


def released_metadata(result) -> list[dict]:
    with open(result.directory / "metadata.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_an_excel_csv_with_a_byte_order_mark_keeps_its_first_column(source, key, tmp_path):
    metadata = source / "metadata.csv"
    metadata.write_bytes(b"\xef\xbb\xbf" + metadata.read_bytes())
    (source / "survey.csv").write_bytes(
        b"\xef\xbb\xbfsession_id,ownership\r\n" + SMALLEST.encode() + b",6\r\n"
    )
    result = build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path,
                           processes=1)  # fmt: skip
    rows = released_metadata(result)
    assert rows[0]["timestamp"] and all(row["timestamp"] for row in rows)
    survey = (result.directory / "survey.csv").read_text(encoding="utf-8")
    assert survey.startswith("session_id,ownership\n") and f"{released(key, SMALLEST)},6" in survey


def test_a_survey_answer_over_128_kb_is_released_whole(source, key, tmp_path):
    answer = "I liked writing with the machine. " * 6000  # 204 KB
    with open(source / "survey.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["session_id", "comments"], [SMALLEST, answer]])
    result = build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path,
                           processes=1)  # fmt: skip
    with open(result.directory / "survey.csv", newline="", encoding="utf-8") as handle:
        csv.field_size_limit(1 << 24)
        (row,) = list(csv.DictReader(handle))
    assert row["comments"] == answer
    assert verify(result.directory).ok


@pytest.mark.parametrize(
    "name, damage, expected",
    [
        ("metadata.csv", lambda data: data.replace(b"isolation", b"iso\xfflation", 1),
         "metadata.csv line {line}: byte 0xff is not UTF-8"),
        ("metadata.csv", lambda data: data.rstrip(b"\n") + b"\n7/1/2021,AONLY\n",
         "metadata.csv line 4: 2 field(s) where the header has"),
        ("survey.csv", lambda data: b"session_id,comments\n" + SMALLEST.encode() + b',"open\n',
         "survey.csv line 2: unexpected end of data"),
    ],
)  # fmt: skip
def test_a_damaged_csv_is_reported_with_its_file_and_line(source, key, tmp_path, name, damage,
                                                          expected):  # fmt: skip
    path = source / name
    data = path.read_bytes() if path.exists() else b""
    damaged = damage(data)
    path.write_bytes(damaged)
    line = damaged[: damaged.find(b"\xff")].count(b"\n") + 1
    result = build(source, key, tmp_path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert str(path) in result.output
    assert expected.format(line=line) in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.fixture
def process_limit():
    """The csv module's cell limit, which is one for the whole process, given back afterwards."""
    limit = csv.field_size_limit()
    yield
    csv.field_size_limit(limit)


@pytest.mark.parametrize("raised_by_frictionless", [False, True])
def test_a_cell_beyond_the_limit_names_its_line(source, tmp_path, process_limit, raised_by_frictionless):
    if raised_by_frictionless:
        # `study release verify` reads the release with frictionless, whose CSV parser sets the
        # process's limit to 2 GB (its settings.FIELD_SIZE_LIMIT) when it is imported: the next
        # release read in that process must still refuse a cell past 16 MB.
        from frictionless.formats.csv import settings

        csv.field_size_limit(settings.FIELD_SIZE_LIMIT)
    with open(source / "survey.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["session_id", "comments"], [OTHER, "ok"],
                                      [SMALLEST, "x" * (17 * 1024 * 1024)]])  # fmt: skip
    with pytest.raises(SourceError, match=r"survey.csv line 3: a cell is longer than 16 MB"):
        open_source(source, tmp_path)


def test_a_session_log_with_bytes_that_are_not_utf8_is_named_with_its_line(source, key, tmp_path):
    path = source / "sessions" / f"{SMALLEST}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[49] = lines[49].replace(b'"eventName"', b'"event\xffName"', 1)
    path.write_bytes(b"\n".join(lines))
    result = build(source, key, tmp_path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{path} line 50: is not UTF-8 text (byte 0xff" in result.output
    assert f"--exclude {SMALLEST}" in result.output


def test_identity_columns_of_a_survey_are_dropped_however_a_spreadsheet_spells_them(
    source, key, tmp_path
):
    # As survey tools and MTurk's batch files head them; an assignment id and a short access
    # code are no pattern the redaction knows, so only dropping the column keeps them out.
    header = ["session_id", "Worker ID", "AssignmentId", "Access Code", "IP Address",
              "PROLIFIC_PID", "E-mail Address", "ownership"]  # fmt: skip
    answers = ["A3KX9PQ2ZL7MWT", "3PMBY0YE272Q4D2CIGFQ2ENFQ9S9C4", "P017", "203.0.113.9",
               "60a1b2c3d4e5f60718293a4b", "jane.doe@example.com", "6"]  # fmt: skip
    with open(source / "survey.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, [SMALLEST, *answers]])

    result = build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path,
                           processes=1)  # fmt: skip

    survey = (result.directory / "survey.csv").read_text(encoding="utf-8")
    assert survey == f"session_id,ownership\n{released(key, SMALLEST)},6\n"
    for path in result.directory.rglob("*"):
        if path.is_file():
            assert b"3PMBY0YE272Q4D2CIGFQ2ENFQ9S9C4" not in path.read_bytes(), path.name
            assert b"Access Code" not in path.read_bytes(), path.name



def _without_worker_id(data: bytes) -> bytes:
    lines = [line.rstrip(b"\r\n").split(b",") for line in data.splitlines()]
    at = lines[0].index(b"worker_id")
    return b"".join(b",".join(c for i, c in enumerate(cells) if i != at) + b"\n" for cells in lines)


@pytest.mark.parametrize(
    "damage, fix",
    [
        (_without_worker_id, "Fix: add a worker_id column"),
        # MTurk's batch results spell it WorkerId
        (lambda data: data.replace(b"worker_id", b"WorkerId", 1), "Fix: rename column 'WorkerId' to worker_id"),
    ],
)  # fmt: skip
def test_a_metadata_csv_without_worker_id_names_the_header_line_and_the_fix(source, key, tmp_path,
                                                                            damage, fix):  # fmt: skip
    path = source / "metadata.csv"
    path.write_bytes(damage(path.read_bytes()))
    result = build(source, key, tmp_path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{path} line 1: no worker_id column" in result.output
    assert fix in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("name", ["metadata.csv", "survey.csv"])
def test_a_csv_saved_with_semicolons_is_told_to_be_saved_with_commas(source, key, tmp_path, name):
    # Excel in many locales saves "CSV" with semicolons: the header is then one column, and
    # "add a session_id column" would send the curator the wrong way.
    path = source / name
    data = path.read_bytes() if path.exists() else f"session_id,comments\n{SMALLEST},fine\n".encode()
    path.write_bytes(data.replace(b",", b";"))
    result = build(source, key, tmp_path)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{path} line 1: the cells are separated by ';', not commas. Fix: save it as CSV with commas" in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
