"""Check session files: each record against its schema, then the invariants of the format.

Errors make a session unusable or break the format; warnings are oddities real logs have
(shared data README: timestamps going back, unanswered queries, cursor mismatches, ...).
Every issue names the file, line and field, and says how to fix it. `study.curation.issues`
lists them all with their severity and fix; the checks of a record are study.curation.checker's,
in the order they run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import orjson

from study.curation.checker import Checker, Replayed
from study.curation.formats import (
    FORMAT_2021,
    detect_format,
    encoding_problem,
    iter_lines,
    not_a_session_hint,
)
from study.curation.issues import (  # noqa: F401 - re-exported: validate's vocabulary
    ERROR,
    ISSUES,
    MAX_PER_CODE,
    WARNING,
    Issue,
    SessionReport,
)
from study.curation.schema import SCHEMA_FILES, fast_check, schema_errors, validator


def validate_lines(
    lines: Iterable[tuple[int, bytes]],
    file: str = "",
    session_id: str = "",
    keep: int | None = MAX_PER_CODE,
    follow: Callable[[dict], None] | None = None,
    replayed: Replayed | None = None,
) -> SessionReport:
    """Validate one session given as (line number, raw JSON line) pairs; `keep` issues of each
    code are worded and kept (None: all), and every one is counted. With `follow`, every line
    that is a JSON object is passed to it as it is read, so a caller that also measures the
    session parses each line once (study.curation.onepass); `replayed`, a replay `follow`
    runs, lends the checker its text (study.curation.checker.Replayed)."""
    report = SessionReport(file=file, session_id=session_id, keep=keep)
    checker = Checker(report, replayed)  # its format is set by the first record
    check = None
    loads = orjson.loads
    record_event = checker.record
    events = 0
    for number, raw in lines:
        if not raw or raw.isspace():
            checker.add("blank-line", number, None, "is blank")
            continue
        events += 1
        try:
            record = loads(raw)
        except orjson.JSONDecodeError as error:
            encoding = encoding_problem(raw, number)
            if encoding is not None:
                checker.add(encoding[0], number, None, encoding[1])
            else:
                checker.add("json", number, None, f"is not valid JSON ({error})")
            checker.broken(number, None)
            continue
        if type(record) is not dict:
            checker.add(
                "not-object", number, None, f"is a JSON {type(record).__name__}, not an object"
            )
            checker.broken(number, record)
            continue
        if follow is not None:
            follow(record)
        if check is None:
            found = detect_format(record)
            if found is None:
                checker.add(
                    "format",
                    number,
                    None,
                    "has neither `eventNum` (2021 release, export) nor `originalSuggestions` "
                    "(later interface), or both; checked as the 2021 format."
                    + not_a_session_hint(record),
                )
            checker.set_format(found or FORMAT_2021)  # check as 2021, so the schema errors explain
            check = fast_check(report.format)
        if check(record) or not _schema_issues(checker, number, record):
            record_event(number, record)
        else:
            checker.broken(number, record)
    report.events = events
    if events == 0:
        checker.add("empty", None, None, "has no events")
    else:
        checker.finish()
    return report


def _schema_issues(checker: Checker, number: int, record: Mapping) -> bool:
    """Report how `record` breaks its schema; False if it does not (the fast check was
    conservative, e.g. 3.0 for an integer)."""
    counts, keep = checker.report.counts, checker.report.keep
    if keep is not None and counts[(ERROR, "schema")] >= keep:  # count, don't word: it is slow
        if validator(checker.format).is_valid(record):
            return False
        counts[(ERROR, "schema")] += 1
        return True
    fix = f"make the record match schemas/{SCHEMA_FILES[checker.format]}"
    found = False
    for field_name, message in schema_errors(record, checker.format):
        found = True
        checker.add("schema", number, field_name, message, fix)
    return found


def validate_file(path: str | os.PathLike, keep: int | None = MAX_PER_CODE) -> SessionReport:
    """Validate one `<session_id>.jsonl` file (read whole: one session is a few MB at most)."""
    path = Path(path)
    return validate_lines(iter_lines(path), file=str(path), session_id=path.stem, keep=keep)


def validate_events(events: Iterable[Mapping], session_id: str = "") -> SessionReport:
    """Validate already parsed events (line numbers are positions, from 1)."""
    lines = ((number, orjson.dumps(event)) for number, event in enumerate(events, start=1))
    return validate_lines(lines, file=session_id, session_id=session_id)
