"""Where a release keeps its per-session metadata, and reading it in either layout.

Two layouts are read:
- **metadata.csv**: one sheet for all sessions with a `genre` column, as `study export` writes
  it (and as `shared/data/coauthor` ships the sample);
- **per-genre sheets**: the public CoAuthor release as distributed, one sheet per genre
  exported as `creative.csv` and `argumentative.csv` (columns timestamp, worker_id,
  session_id, prompt_code, temperature, frequency_penalty, num_query, num_selected,
  perc_selected, num_cursor, time, num_event, written_by_human: no `genre` column). The genre is
  the sheet's file name.

A row without a genre (a hand-made metadata.csv) takes it from its prompt code: the paper's
App. B lists the ten prompts of each genre (Tables 4 and 5). Session logs lie beside the
metadata: in `sessions/`, in the folder itself, or split per genre (`creative/`,
`argumentative/`, either of them under `sessions/` or not).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from study.curation.stats import condition_of

METADATA_CSV = "metadata.csv"
GENRES = ("creative", "argumentative")
GENRE_SHEETS = tuple(f"{genre}.csv" for genre in GENRES)
# CoAuthor App. B: Table 4 (creative, WritingPrompts) and Table 5 (argumentative, NYT).
PROMPT_GENRES = {
    **dict.fromkeys(("shapeshifter", "reincarnation", "mana", "obama", "pig", "mattdamon",
                     "sideeffect", "bee", "dad", "isolation"), "creative"),
    **dict.fromkeys(("screen", "dating", "pads", "school", "stereotype", "audiobook", "athletes",
                     "extremesports", "animal", "news"), "argumentative"),
}  # fmt: skip


class MetadataError(ValueError):
    """A metadata sheet that cannot be read; the message names the file, line and fix."""


@dataclass(frozen=True)
class MetadataFiles:
    """The metadata sheets found for a folder of sessions."""

    folder: Path
    files: tuple[Path, ...]
    # What a sheet of another name is, in words (e.g. a proactive export's sessions.csv: "the
    # export's table of proactive sessions"); empty: not known, its name alone is given.
    what: str = ""

    @property
    def layout(self) -> str:
        """The release's per-genre sheets (creative.csv and argumentative.csv), else one sheet with
        a genre column: metadata.csv, or another (a paradigm's export table, a user's .csv)."""
        return "per-genre sheets" if all(f.name in GENRE_SHEETS for f in self.files) else METADATA_CSV

    def describe(self, shown: Callable[[Path], str] = str) -> str:
        """Which layout was read, in words (the CLI prints it; the report too, with `shown`
        giving each path as the report shows it: study.report.shown_paths)."""
        if self.layout == METADATA_CSV:
            return f"metadata from {shown(self.files[0])}" + (f" ({self.what})" if self.what else "")
        names = " and ".join(f.name for f in self.files)
        return (f"metadata from the release's per-genre sheets {names} in {shown(self.folder)} "
                "(genre from the file name)")  # fmt: skip


def metadata_in(folder: str | os.PathLike) -> MetadataFiles | None:
    """The metadata sheets in one folder: metadata.csv if there is one, else the genre sheets."""
    folder = Path(folder)
    if (folder / METADATA_CSV).is_file():
        return MetadataFiles(folder, (folder / METADATA_CSV,))
    sheets = tuple(folder / name for name in GENRE_SHEETS if (folder / name).is_file())
    return MetadataFiles(folder, sheets) if sheets else None


def find_metadata(path: str | os.PathLike, levels_up: int = 1) -> MetadataFiles | None:
    """The metadata for the sessions in (or at) `path`: in its folder or up to `levels_up`
    folders above (the release's sheets sit one level above `sessions/`, or two above a
    per-genre split `sessions/creative/`). The folders above are those of the path as given
    first: a `sessions` linked to the logs elsewhere (a copy of a large release spared) reads
    the metadata beside the link, and that beside its target only when there is none."""
    for path in (Path(os.path.abspath(path)), Path(path).resolve()):
        folder = path if path.is_dir() else path.parent
        for candidate in (folder, *folder.parents[:levels_up]):
            found = metadata_in(candidate)
            if found is not None:
                return found
    return None


def metadata_at(path: str | os.PathLike) -> MetadataFiles:
    """The metadata a user named: a sheet (metadata.csv, creative.csv, argumentative.csv, or any
    .csv with a genre column) or a folder holding them."""
    path = Path(path)
    if path.is_dir():
        found = metadata_in(path)
        if found is None:
            raise MetadataError(f"{path}: no {METADATA_CSV}, {' or '.join(GENRE_SHEETS)} here")
        return found
    if path.name in GENRE_SHEETS:
        # One genre's sheet: read its sibling too, so both genres are there.
        return MetadataFiles(path.parent, tuple(
            path.parent / name for name in GENRE_SHEETS
            if name == path.name or (path.parent / name).is_file()
        ))  # fmt: skip
    return MetadataFiles(path.parent, (path,))


def read_metadata(path: str | os.PathLike) -> dict[str, dict]:
    """The metadata at `path` (a sheet or a folder, as `metadata_at`), by session id."""
    return read_metadata_files(metadata_at(path))


def read_metadata_files(found: MetadataFiles) -> dict[str, dict]:
    """session_id -> metadata row, each with `genre` and `condition` (the study's, as `study
    export` names it, else high/low randomness)."""
    rows: dict[str, dict] = {}
    where: dict[str, str] = {}
    for file in found.files:
        sheet_genre = file.stem if file.name in GENRE_SHEETS else None
        for line, row in _rows(file):
            session_id = (row.get("session_id") or "").strip()
            if not session_id:
                raise MetadataError(f"{file} line {line}: empty session_id")
            if session_id in rows:
                raise MetadataError(
                    f"{file} line {line}: session {session_id} is already listed at "
                    f"{where[session_id]}; a session belongs to one row of one sheet"
                )
            row["session_id"] = session_id
            row["genre"] = (row.get("genre") or sheet_genre
                            or PROMPT_GENRES.get(row.get("prompt_code") or "", ""))  # fmt: skip
            # A study's export names each session's condition; CoAuthor's release has only the
            # decoding settings, from which Figure 2's randomness condition follows.
            if not row.get("condition"):
                row["condition"] = condition_of(row.get("temperature"), row.get("frequency_penalty"))
            rows[session_id] = row
            where[session_id] = f"{file.name} line {line}"
    return rows


def other_separator(columns: list[str]) -> str:
    """The separator of a header read as one column when it is not a comma (Excel in many
    locales saves "CSV" with semicolons), else "": the fix is then to save it again, not to
    add the columns it seems to lack."""
    if len(columns) == 1:
        for separator in (";", "\t", "|"):
            if separator in columns[0]:
                return separator
    return ""


def separator_fix(file: Path, separator: str) -> str:
    shown = "a tab" if separator == "\t" else repr(separator)
    return (f"{file} line 1: the cells are separated by {shown}, not commas. Fix: save it as CSV "
            "with commas (in Excel: CSV UTF-8 (Comma delimited)).")


def _rows(file: Path):
    try:
        with open(file, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            separator = other_separator(reader.fieldnames or [])
            if separator:
                raise MetadataError(separator_fix(file, separator))
            if "session_id" not in (reader.fieldnames or ()):
                raise MetadataError(
                    f"{file}: no session_id column (found: {', '.join(reader.fieldnames or ())}"
                    "). Export the release's sheet with its header row."
                )
            width = len(reader.fieldnames)
            for row in reader:
                # A short row (a sheet cut short by a copy that stopped) would read its missing
                # cells as absent: a session without its writer or genre, counted silently.
                if None in row or None in row.values():
                    cells = width + len(row.get(None) or ()) - sum(v is None for v in row.values())
                    raise MetadataError(
                        f"{file} line {reader.line_num}: {cells} cell(s) where the header has "
                        f"{width}. Fix: give every row one cell per column (quote cells that hold "
                        "commas); a short last row means the file was cut short: copy or export it again."
                    )
                yield reader.line_num, row
    except UnicodeDecodeError as error:
        raise MetadataError(f"{file}: not UTF-8 text ({error.reason} at byte {error.start}); "
                            "export the sheet as CSV UTF-8") from None  # fmt: skip
    except csv.Error as error:
        raise MetadataError(f"{file}: not readable as CSV ({error})") from None


def session_logs(folder: str | os.PathLike) -> list[Path]:
    """The session logs beside a release's metadata: `sessions/`, the folder itself, or split
    per genre (`creative/`, `argumentative/`), whichever holds .jsonl files first."""
    folder = Path(folder)
    for base in (folder / "sessions", folder):
        files = sorted(base.glob("*.jsonl"))
        for genre in GENRES:
            files += sorted((base / genre).glob("*.jsonl"))
        files = [f for f in files if f.is_file()]
        if files:
            return files
    return []
