"""Read the CSV files a release is built from or made of, as people and spreadsheets write them.

Excel saves "CSV UTF-8" with a byte-order mark, which a plain `utf-8` reader glues to the first
column's name (`\\ufefftimestamp`), silently emptying that column; so files are read as
`utf-8-sig`. Survey answers can be long, and Python's csv module stops at 128 KB per field by
default; fields up to `MAX_FIELD` are accepted. Anything else wrong (bytes that are not UTF-8, a
row with more or fewer fields than the header, an unterminated quote) is a `CsvError` naming the
file and the line, never a traceback and never a row quietly read with empty cells.
"""

from __future__ import annotations

import contextlib
import csv
import io
from pathlib import Path
from typing import Iterator

MAX_FIELD = 16 * 1024 * 1024  # bytes of one cell: a long essay is 50 KB


class CsvError(ValueError):
    """A CSV file that cannot be read as a table; the message names the file and the line."""


def read_table(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and every row as (line number, {column: text}) of the CSV file `path`.

    Line numbers are those of a text editor (the header is line 1), counted where the row
    starts, so a row with a quoted line break is found where it begins.
    """
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise CsvError(
            f"{path} line {line}: byte {data[error.start]:#04x} is not UTF-8. "
            "Fix: save the file as UTF-8 (in Excel: CSV UTF-8)."
        ) from None
    with wide_fields():
        return _rows(path, text)


@contextlib.contextmanager
def wide_fields() -> Iterator[None]:
    """Let the csv module read cells up to MAX_FIELD and no further (its default stops at
    128 KB). The limit is one for the whole process, and other libraries set it too (importing
    frictionless's CSV parser, as `study release verify` does, raises it to 2 GB): it is set to
    MAX_FIELD exactly here, and given back after."""
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_FIELD)
    try:
        yield
    finally:
        csv.field_size_limit(limit)


def _rows(path: Path, text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    start = 1
    try:
        header = next(reader, None)
        if header is None:
            raise CsvError(f"{path}: the file is empty; it needs a header row.")
        header = [name.strip() for name in header]
        start = reader.line_num + 1
        for cells in reader:
            if not cells:  # a blank line
                start = reader.line_num + 1
                continue
            if len(cells) != len(header):
                raise CsvError(
                    f"{path} line {start}: {len(cells)} field(s) where the header has "
                    f"{len(header)}. Fix: give every row one cell per column (quote cells that "
                    "hold commas)."
                )
            rows.append((start, dict(zip(header, cells))))
            start = reader.line_num + 1
    except csv.Error as error:
        detail = str(error)
        if "field larger than field limit" in detail:
            detail = f"a cell is longer than {MAX_FIELD // (1024 * 1024)} MB"
        raise CsvError(f"{path} line {start}: {detail}.") from None
    return header, rows
