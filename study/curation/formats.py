"""Session files: find them, tell their format, and read their events (with orjson).

Three producers write one `<session_id>.jsonl` per session, one event per line, in two formats:

- `coauthor-2021`: the public CoAuthor v1.0 release (Lee, Liang & Yang, CHI 2022), 17 keys in
  a fixed order ending in `eventNum`. This project's own export (`study.export.coauthor`) writes
  exactly this format, so it is detected as `coauthor-2021` too.
- `coauthor-interface`: the later public interface, whose records carry `originalSuggestions`
  instead of `eventNum` (and suggestion items with a `source`).

The format is detected per file from the keys of its first parsable record; the schemas in
`schemas/coauthor-*.schema.json` define each record (see `study.curation.schema`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

FORMAT_2021 = "coauthor-2021"
FORMAT_INTERFACE = "coauthor-interface"
# The 2021 record plus `proactive`: MindCopilot L1-L3 sessions (schemas/coauthor-proactive...).
FORMAT_PROACTIVE = "coauthor-proactive"
FORMATS = (FORMAT_2021, FORMAT_INTERFACE, FORMAT_PROACTIVE)

# The release's key order (shared data README, "The 2021 record"); the export keeps it.
RELEASE_KEYS = (
    "eventName", "eventSource", "eventTimestamp", "textDelta", "cursorRange", "currentDoc",
    "currentCursor", "currentSuggestions", "currentSuggestionIndex", "currentHoverIndex",
    "currentN", "currentMaxToken", "currentTemperature", "currentTopP",
    "currentPresencePenalty", "currentFrequencyPenalty", "eventNum",
)  # fmt: skip
INTERFACE_KEYS = RELEASE_KEYS[:-1] + ("originalSuggestions",)
CONTROL_KEYS = RELEASE_KEYS[10:16]


class SessionFileError(ValueError):
    """A session file that cannot be read as events (message names file and line)."""


@dataclass
class Session:
    """One parsed session: its events in line order, and where each came from."""

    session_id: str
    events: list[dict]
    format: str = FORMAT_2021
    path: str = ""
    lines: list[int] = field(default_factory=list)  # 1-based line number of each event

    def line_of(self, index: int) -> int:
        return self.lines[index] if self.lines else index + 1


def detect_format(record: Mapping) -> str | None:
    """The format a record belongs to, from its keys; None when it fits neither."""
    has_num = "eventNum" in record
    has_original = "originalSuggestions" in record
    if has_num and not has_original and "proactive" in record:
        return FORMAT_PROACTIVE
    if has_num and not has_original:
        return FORMAT_2021
    if has_original and not has_num:
        return FORMAT_INTERFACE
    return None


def not_a_session_hint(record: Mapping) -> str:
    """Why a record that fits no session format was given, when it is another file of this
    project: a chat study's conversation (`study export --format chat`)."""
    if str(record.get("format", "")).startswith("study-chat") and "messages" in record:
        return (" This line is a chat conversation (`study export --format chat`), not a session "
                "log: check it with `study curate chat FILE`.")  # fmt: skip
    return ""


def session_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The `.jsonl` files named by `paths` (files as given, folders searched recursively), each
    once: a file named twice (a folder and a file in it, or a path given twice) would be a
    session counted twice in `--summary` and Table 3."""
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            named = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            named = [path]
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
        for each in named:
            if each.resolve() not in seen:
                seen.add(each.resolve())
                found.append(each)
    return found


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) for every line of a file; a final newline ends the last line.

    A session file is read whole (a few MB at most); the corpus is streamed file by file.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if b"\r" not in data:  # the common case: nothing to strip, no line to look at twice
        return enumerate(lines, start=1)
    return ((number, raw[:-1] if raw.endswith(b"\r") else raw) for number, raw in enumerate(lines, start=1))


# The fixes of validate's `bom` and `encoding` issues (study.curation.issues), which stats'
# messages give too.
ENCODING_FIXES = {
    "bom": "save the file as UTF-8 without a byte order mark (remove its first 3 bytes); keep "
           "the line, it holds the session's start",
    "encoding": "re-encode the whole file as UTF-8 (e.g. `iconv -f windows-1252 -t utf-8`); "
                "keep the lines, they hold the session's text",
}  # fmt: skip


def encoding_problem(raw: bytes, number: int) -> tuple[str, str] | None:
    """(issue code, what is wrong) when a line that is not valid JSON fails on its encoding: a
    byte order mark (`bom`, some Windows editors write one) or bytes that are not UTF-8
    (`encoding`, a file saved as Windows-1252). The file is at fault, not the line: removing
    the line, as for broken JSON, would lose the prompt or the writer's text (ENCODING_FIXES).
    None when the line is UTF-8 without a BOM."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        return "bom", "starts with a byte order mark (bytes EF BB BF), which JSON Lines does not allow"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return "encoding", (f"is not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
                            f"{error.start + 1}): the file was saved in another encoding")  # fmt: skip
    return None


def read_session(path: str | os.PathLike) -> Session:
    """Read a whole session strictly: every non-blank line must be a JSON object.

    Raises SessionFileError naming the file and line. Use `study.curation.validate` to get
    every problem of a file instead of the first one.
    """
    path = Path(path)
    events: list[dict] = []
    lines: list[int] = []
    loads = orjson.loads
    with open(path, "rb") as handle:
        data = handle.read()  # one session at a time: a few MB at most
    # Parsed JSON holds no reference cycles, so the cycle collector would only rescan the
    # growing session over and over: pausing it makes reading about a third faster.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw or raw.isspace():
                continue
            try:
                record = loads(raw)
            except orjson.JSONDecodeError as error:
                encoding = encoding_problem(raw, number)
                if encoding is not None:
                    code, problem = encoding
                    raise SessionFileError(
                        f"{path} line {number}: {problem}. Fix: {ENCODING_FIXES[code]}"
                    ) from None
                # A file that ends inside its last line is most often a copy that stopped.
                cut = not data.endswith(b"\n") and number == data.count(b"\n") + 1
                raise SessionFileError(
                    f"{path} line {number}: not valid JSON ({error}). Fix: repair or remove the "
                    "line" + (" (the file ends inside it: copy the file again from its source if "
                              "the copy was cut short)" if cut else "")
                ) from None  # fmt: skip
            if type(record) is not dict:
                raise SessionFileError(
                    f"{path} line {number}: expected an event object, got {type(record).__name__}. "
                    "Fix: each line must be one event object; remove or repair the line"
                )
            events.append(record)
            lines.append(number)
    finally:
        if collecting:
            gc.enable()
    if not events:
        raise SessionFileError(f"{path}: the file has no events. Fix: remove the file or restore its lines")
    found = detect_format(events[0])
    if found is None:
        raise SessionFileError(
            f"{path} line {lines[0]}: cannot tell the format: a record needs either `eventNum` "
            "(2021 release, export) or `originalSuggestions` (later interface), not both or neither."
            + not_a_session_hint(events[0])
        )
    return Session(session_id=path.stem, events=events, format=found, path=str(path), lines=lines)


def sessions_from(paths: Iterable[str | os.PathLike]) -> Iterator[Session]:
    """Every session under `paths`, one at a time (memory holds one session)."""
    for path in session_files(paths):
        yield read_session(path)
