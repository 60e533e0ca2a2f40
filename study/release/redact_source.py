"""A release's source redacted (study.release.build, step 2): every session on all cores
(study.curation.runner), and the survey answers.

Each session is read, redacted (study.release.redaction) and measured in a worker; the parent
gets back its released bytes with its metadata and statistics, and never holds more than a few
sessions at a time. A session that cannot be redacted stops the build by its file's name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from study.curation.formats import Session, read_session
from study.curation.metadata import official_metadata
from study.curation.runner import run
from study.curation.stats import session_stats
from study.release.pii import Detector, redact_text
from study.release.preflight import BuildError
from study.release.redaction import redact_session
from study.release.redaction_report import Redaction, span_redactions
from study.release.source import Source, SourceSession


@dataclass
class Processed:
    """A session redacted, as the worker hands it back."""

    session_id: str  # the released id
    source_id: str
    format: str
    data: bytes
    redactions: list[Redaction]
    official: dict
    stats: dict


Job = tuple[SourceSession, frozenset[str], str]  # (session, the known worker ids, its released id)

_DETECTOR: Detector | None = None  # set before the worker pool forks (study.curation.runner)


def detector_for(known_ids: frozenset[str]) -> Detector:
    """The detector for these ids: inherited from the parent when the pool forks, else built."""
    global _DETECTOR
    if _DETECTOR is None or set(_DETECTOR.known_ids) != known_ids:
        _DETECTOR = Detector(known_ids)
    return _DETECTOR


def sessions(jobs: list[Job], processes: int | None, progress: bool | None) -> Iterator[Processed]:
    """Each job's session redacted, in the order of `jobs`, on `processes` cores."""
    return run(process, jobs, processes=processes, progress=progress, failed=failed)


def process(job: Job) -> Processed:
    session, known_ids, released_id = job
    parsed = read_session(session.path)
    result = redact_session(session.session_id, parsed.events, detector_for(known_ids))
    data = b"".join(json.dumps(event).encode() + b"\n" for event in result.events)
    released = Session(released_id, result.events, parsed.format)
    return Processed(
        released_id, session.session_id, parsed.format, data, result.redactions,
        official_metadata(result.events), session_stats(released),
    )  # fmt: skip


def failed(job: Job, message: str) -> Processed:
    raise BuildError(
        f"{job[0].path}: could not be redacted ({message}); nothing was released. "
        f"`study curate validate {job[0].path}` lists its problems."
    )


def survey(
    source: Source, included: list[SourceSession], released: dict[str, str],
    redactions: list[Redaction], detector: Detector,
) -> list[dict]:  # fmt: skip
    """survey.csv's rows of the `included` sessions, each answer redacted as a text of its own;
    what was redacted is added to `redactions`."""
    rows = []
    for session in included:
        answers = source.survey.get(session.session_id)
        if answers is None:
            continue
        row = {"session_id": released[session.session_id]}
        for column in source.survey_columns:
            value = answers.get(column, "")
            redacted, spans = redact_text(value, detector)
            row[column] = redacted
            redactions += span_redactions(session.session_id, f"survey {column}", value, redacted, spans)
        rows.append(row)
    return rows
