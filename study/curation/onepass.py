"""Validate and measure each session in one pass: `study curate stats --validate`.

`validate` and `stats` each read and parse every file, so curating a release with both cost
1.76x a plain `json.loads` pass over it (issue 17). Here each file is read and each line parsed
once, by the validator (study.curation.validate), which hands each record it parsed to the
session's `study.curation.stats.SessionMeasure` as it goes (no session is held whole) and takes
that measure's replayed text for each keystroke instead of replaying it again. The report is
the one `study curate validate` makes of the file and the row the one `study curate stats`
makes, so the combined command prints what the two commands print
(tests/curation/test_onepass.py holds it to that).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from study.curation.formats import detect_format, iter_lines
from study.curation.issues import MAX_PER_CODE, SessionReport
from study.curation.runner import failed_session_report, run, stats_worker
from study.curation.stats import SessionMeasure
from study.curation.validate import validate_lines

Measured = tuple[dict | None, str | None]  # (row, None) or (None, why the session was skipped)


def check_and_measure(
    path: str | Path, sets: str, keep: int | None = MAX_PER_CODE
) -> tuple[SessionReport, Measured]:
    """The validation report of one session file and its statistics row, from one parse."""
    path = Path(path)
    follower = _Measuring(SessionMeasure(path.stem, "", sets))
    report = validate_lines(
        iter_lines(path), file=str(path), session_id=path.stem, keep=keep, follow=follower.add,
        replayed=follower.measure.attribution,
    )  # fmt: skip
    # `stats` reads a file strictly (study.curation.formats.read_session): every non-blank line
    # an object and a known format. The validator counts every non-blank line as an event, so a
    # line it could not parse leaves the follower with fewer.
    if follower.stopped or follower.added != report.events:
        # Unmeasurable for `stats`: it says why in its own words, which a rare broken file may
        # spend a second read on.
        return report, stats_worker((path, sets))
    try:
        return report, (follower.measure.row(), None)
    except (ValueError, KeyError, TypeError):
        return report, stats_worker((path, sets))  # the message `stats` gives for it


class _Measuring:
    """Feeds each record the validator parsed to the session's `SessionMeasure`, and stops at
    a record `stats` would refuse the session for."""

    def __init__(self, measure: SessionMeasure) -> None:
        self.measure = measure
        self.added = 0
        self.stopped = False

    def add(self, record: dict) -> None:
        if self.stopped:
            return
        if not self.added:
            found = detect_format(record)
            if found is None:
                self.stopped = True
                return
            self.measure.format = found
        try:
            self.measure.add(record)
        except (ValueError, KeyError, TypeError):
            self.stopped = True
            return
        self.added += 1


def onepass_worker(job: tuple[Path, str, int | None]) -> tuple[SessionReport, Measured]:
    path, sets, keep = job
    return check_and_measure(path, sets, keep)


def check_and_measure_paths(
    files: Iterable[Path], sets: str, *, keep: int | None = MAX_PER_CODE, **options
) -> Iterator[tuple[SessionReport, Measured]]:
    """(report, (row, problem)) per file, in file order, on every core (study.curation.runner)."""
    yield from run(
        onepass_worker,
        [(path, sets, keep) for path in files],
        failed=lambda job, message: (
            failed_session_report(job[0], message), (None, f"{job[0]}: {message}")
        ),
        **options,
    )
