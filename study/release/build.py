"""`study release build`: from a source to a verified, versioned, anonymized release.

1. Read the source (`study.release.source`) and leave out sessions whose writer withdrew
   (`study.release.withdraw`); refuse invalid logs (`study.curation.validate`).
2. Redact every session (`study.release.redaction`, on all cores) and the survey answers;
   pseudonymise worker ids (`study.release.pseudonyms`).
3. Write the data files into `RELEASES/.<name>-X.Y.Z.partial/`, compare them with the previous
   release of that name (`study.release.diff`) and check the version against the rules
   (`study.release.versioning`).
4. Write datapackage.json, the card, the CHANGELOG and SHA256SUMS, then verify the whole folder
   (`study.release.verify`, including the leak scan with the source's raw worker ids). A
   failure deletes the partial folder: nothing is released.
5. Write the curator's redaction report (`study.release.redaction_report`) and the
   re-identification table beside the key and the archive under a hidden name, then rename the
   folder (`study.release.publish`) to `RELEASES/<name>-X.Y.Z/` (the one
   step that publishes the version) and the archive into place. A crash before the rename
   leaves the version free; after it, the next build moves the archive into place.

Session ids are released under fresh keyed ids (`study.release.pseudonyms`), never the ids the
study server answers to; `--exclude SESSION` leaves a session out (e.g. one that cannot be
replayed).

Deterministic: the same source, key and version give byte-identical files; dates come from the
sessions' timestamps, never from the clock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterator

from study.curation.formats import Session, read_session
from study.curation.metadata import official_metadata
from study.curation.runner import run
from study.curation.stats import session_stats
from study.paths import schemas_dir
from study.release import (
    arms_as_run, card, changelog, contact, conversations, datapackage, design, layout, preflight, publish,
    redaction_report, tables, within,
)  # fmt: skip
from study.release.archive import ArchiveError, opened, write_archive
from study.release.checksums import write_sums
from study.release.csvtable import CsvError, read_table
from study.release.diff import diff_releases, reasons
from study.release.facts import ReleaseFacts, utc_date
from study.release.keys import ReleaseKey, load_key
from study.store.permissions import make_public
from study.release.leakscan import LeakScanner
from study.release.pii import Detector, redact_text
from study.release.pseudonyms import ReidentificationTable, pseudonym, released_session_id
from study.release.redaction import redact_session
from study.release.redaction_report import Redaction, span_redactions
from study.release.source import Source, SourceSession, open_source
from study.release.verify import VerifyReport, source_id_check, verify_directory
from study.release.versioning import Version, check_version
from study.release.preflight import BuildError
from study.release.withdraw import load_withdrawals



@dataclass
class BuildResult:
    directory: Path
    archive: Path
    report: Path
    facts: ReleaseFacts
    redactions: list[Redaction] = field(default_factory=list)
    without_metadata: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # --exclude
    # Finished sessions of a study no synced MTurk assignment or listed access code confirms.
    unconfirmed: list[str] = field(default_factory=list)
    # Withdrawals whose worker id is no writer's or judge's of the source or of any release
    # built with the key (a mistyped id leaves nothing out): how each was recorded, not the id.
    unmatched_withdrawals: list[str] = field(default_factory=list)


@dataclass
class _Processed:
    session_id: str  # the released id
    source_id: str
    format: str
    data: bytes
    redactions: list[Redaction]
    official: dict
    stats: dict


_DETECTOR: Detector | None = None  # set before the worker pool forks (study.curation.runner)


def _detector(known_ids: frozenset[str]) -> Detector:
    """The detector for these ids: inherited from the parent when the pool forks, else built."""
    global _DETECTOR
    if _DETECTOR is None or set(_DETECTOR.known_ids) != known_ids:
        _DETECTOR = Detector(known_ids)
    return _DETECTOR


def _process(job: tuple[SourceSession, frozenset[str], str]) -> _Processed:
    session, known_ids, released_id = job
    parsed = read_session(session.path)
    result = redact_session(session.session_id, parsed.events, _detector(known_ids))
    data = b"".join(json.dumps(event).encode() + b"\n" for event in result.events)
    released = Session(released_id, result.events, parsed.format)
    return _Processed(
        released_id, session.session_id, parsed.format, data, result.redactions,
        official_metadata(result.events), session_stats(released),
    )  # fmt: skip


def _failed(job: tuple[SourceSession, frozenset[str], str], message: str) -> _Processed:
    raise BuildError(
        f"{job[0].path}: could not be redacted ({message}); nothing was released. "
        f"`study curate validate {job[0].path}` lists its problems."
    )


def build_release(
    source_path: str | os.PathLike,
    *,
    version: str,
    out: str | os.PathLike,
    key_path: str | os.PathLike,
    name: str | None = None,
    namespace: str | None = None,
    license: str = "other",
    report_path: str | os.PathLike | None = None,
    processes: int | None = None,
    progress: bool | None = None,
    exclude: Collection[str] = (),
) -> BuildResult:
    """Build the release (see the module docstring). `exclude`: session ids the curator leaves
    out (`--exclude`), e.g. a session whose log cannot be replayed."""
    try:
        number = Version.parse(version)
    except ValueError as error:
        raise BuildError(str(error)) from None
    key = load_key(key_path)
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="study-release-") as scratch:
        source = open_source(source_path, Path(scratch))
        name = name or source.name
        if not layout.NAME.match(name):
            raise BuildError(
                f"release name {name!r}: use lower-case letters, digits, '.', '_' and '-' (--name)"
            )
        namespace = namespace or name
        publish.finish_interrupted(out)
        previous = preflight.previous_release(out, name, number)
        withdrawals = load_withdrawals(key)
        withdrawn = {entry.worker_id for entry in withdrawals}
        left_out = preflight.curator_exclusions(source, exclude)
        included = [
            s for s in source.sessions
            if s.worker_id not in withdrawn and s.session_id not in left_out
        ]  # fmt: skip
        excluded = {s.session_id for s in source.sessions if s.worker_id in withdrawn}
        # A chat study's or chat arm's conversations: another data file of the same release.
        talks = [c for c in source.conversations if c.worker_id not in withdrawn and c.session_id not in left_out]
        excluded |= {c.session_id for c in source.conversations if c.worker_id in withdrawn}
        preflight.check_sessions(source, included, processes, talks)

        table = ReidentificationTable(key)
        judges = design.judge_ids(source.path) if source.kind == "study" else set()
        known_ids = frozenset(source.worker_ids | table.worker_ids() | withdrawn | judges)
        writers = source.worker_ids | table.worker_ids() | judges
        unmatched = [
            f"recorded {w.recorded}" + (f" ({w.reason})" if w.reason else "")
            for w in withdrawals if w.worker_id not in writers
        ]  # fmt: skip
        detector = _detector(known_ids)
        if source.study:
            try:
                contact.check_consent(
                    source.study.consent_text, source.study.contact, detector,
                    where=f"{Path(source_path) / 'study.toml'}", unfinished=source.study.unfinished_consent,
                )  # fmt: skip
            except contact.ContactError as error:
                raise BuildError(f"{error} Nothing was released.") from None
        dirname = layout.release_dirname(name, number)
        staging = out / f".{dirname}.partial"
        if staging.exists():
            shutil.rmtree(staging)  # left by an interrupted build
        (staging / layout.SESSIONS).mkdir(parents=True)
        try:
            facts, redactions = _write_release(
                staging, source, included, talks, excluded, withdrawn, table, key, name, namespace,
                license, number, previous, known_ids, processes, progress,
            )  # fmt: skip
            report = VerifyReport(dirname)
            verify_directory(
                staging,
                report,
                scanner=LeakScanner(known_ids, detector, processes),
                processes=processes,
            )
            report.checks.append(source_id_check(staging, source.session_ids))
            if not report.ok:
                raise BuildError(
                    "the finished release failed verification, so nothing was released:\n"
                    + report.render()
                )
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        # Everything that cannot be made again from the release folder is written before the
        # folder is renamed into place, the one step that publishes the version: a crash before
        # it leaves the version free (the next build starts over), a crash after it leaves a
        # complete release whose archive the next build moves into place (`publish.finish_interrupted`).
        report_file = (
            Path(report_path) if report_path else key.companion(".redactions") / f"{dirname}.csv"
        )
        redaction_report.write(report_file, redactions, _released_ids(table, namespace))
        table.save()
        archive = out / (dirname + layout.ARCHIVE_SUFFIX)
        pending = publish.pending_archive(archive)
        write_archive(staging, pending, facts.mtime, top=dirname)
        make_public(pending)
        publish.publish(staging, out / dirname)
        os.replace(pending, archive)
        target = out / dirname
    return BuildResult(
        target, archive, report_file, facts, redactions, source.without_metadata, sorted(left_out),
        source.unconfirmed, unmatched,
    )


def _released_ids(table: ReidentificationTable, namespace: str) -> dict[str, str]:
    """study session id -> released id, as the table has issued them in `namespace`."""
    return {study_id: released for released, study_id in table.sessions.get(namespace, {}).items()}


def _write_release(
    staging, source, included, talks, excluded, withdrawn, table, key: ReleaseKey, name, namespace,
    license, number, previous, known_ids, processes, progress,
) -> tuple[ReleaseFacts, list[Redaction]]:  # fmt: skip
    redactions: list[Redaction] = []
    rows, stats, formats, firsts, lasts = [], [], Counter(), [], []
    by_id = {s.session_id: s for s in included}
    released = {s.session_id: table.issue_session(s.session_id, namespace) for s in [*included, *talks]}
    jobs = [(session, known_ids, released[session.session_id]) for session in included]
    for processed in run(_process, jobs, processes=processes, progress=progress, failed=_failed):
        (staging / layout.session_path(processed.session_id)).write_bytes(processed.data)
        redactions += processed.redactions
        session = by_id[processed.source_id]
        alias = table.issue(session.worker_id, namespace)
        rows.append(
            tables.metadata_row(session.metadata, alias, processed.official, processed.session_id)
        )
        stats.append(tables.stats_row(processed.stats, rows[-1]))
        formats[processed.format] += 1
        firsts.append(processed.official["first_timestamp"])
        lasts.append(processed.official["last_timestamp"])
    # Sorted by the released id, whatever order the workers finished in.
    rows.sort(key=lambda row: row["session_id"])
    stats.sort(key=lambda row: row["session_id"])
    tables.write_csv(staging / layout.METADATA_CSV, tables.METADATA_COLUMNS, rows)
    tables.write_metadata_parquet(staging / layout.METADATA_PARQUET, rows)
    survey_rows = _survey(source, included, released, redactions, _detector(known_ids))
    if survey_rows:
        tables.write_csv(
            staging / layout.SURVEY_CSV, ("session_id", *source.survey_columns), survey_rows
        )
    tables.write_csv(staging / layout.STATS_CSV, tables.STATS_COLUMNS, stats)
    said = conversations.Written()
    if talks:
        try:
            said = conversations.write(staging / layout.CONVERSATIONS, talks, released,
                                       lambda worker: table.issue(worker, namespace), _detector(known_ids))  # fmt: skip
        except ValueError as error:  # DeltaError: a document pane's log that does not replay
            raise BuildError(f"a conversation could not be redacted ({error}); nothing was released. "
                             f"Build without it: --exclude SESSION (`study status` lists the ids).") from None  # fmt: skip
        redactions += said.redactions
        firsts, lasts = firsts + said.first_ms, lasts + said.last_ms
    metadata = {row["session_id"]: row for row in rows}
    tables.write_csv(
        staging / layout.SUMMARY_CSV, tables.SUMMARY_HEADER, tables.summary_rows(stats, metadata)
    )
    design_files, arms, within_design = [], None, None
    if source.kind == "study":  # arms, judging ratings, preregistration (study.release.design)
        arms = arms_as_run.study_arms(source.path, released, source.calls)  # as the released sessions ran them
        design_files = design.write(staging, source.path, released, lambda worker: table.issue(worker, namespace),
                                    withdrawn, arms)  # fmt: skip
        # Within subjects, each released session's writer, arm and position (study.release.within).
        writers = {s.session_id: table.issue(s.worker_id, namespace) for s in included}
        within_design = within.collect(source.path, released, writers)
        design_files += within.write(staging, within_design)
    (staging / layout.SCHEMAS).mkdir()
    for schema in sorted(schemas_dir().glob("coauthor-*.schema.json")):
        shutil.copyfile(schema, staging / layout.SCHEMAS / schema.name)
    for schema in [*(conversations.SCHEMAS if talks else ()), *([within.SCHEMA] if within_design else [])]:
        shutil.copyfile(schemas_dir() / schema, staging / layout.SCHEMAS / schema)

    facts = ReleaseFacts(
        name=name, version=number, namespace=namespace, license=license,
        key_fingerprint=key.fingerprint, source_kind=source.kind,
        date=utc_date(max(lasts)), first_date=utc_date(min(firsts)), last_date=utc_date(max(lasts)),
        sessions=len(rows), writers=len({r["worker_id"] for r in rows} | said.writers),
        conversations=said.conversations, messages=said.messages,
        events=sum(row["num_event"] for row in rows), formats=formats,
        genres=Counter(r["genre"] for r in rows if r["genre"]),
        prompts=Counter(r["prompt_code"] for r in rows if r["prompt_code"]),
        conditions=Counter((r["genre"], r["temperature"], r["frequency_penalty"]) for r in rows),
        survey_sessions=len(survey_rows),
        survey_columns=list(source.survey_columns) if survey_rows else [],
        redacted_by_entity=Counter(r.entity for r in redactions if r.entity != "IN_CONTEXT"),
        redacted_by_place=Counter(redaction_report.place(r) for r in redactions),
        redacted_sessions=len({r.session_id for r in redactions}),
        withdrawn_excluded=len(excluded), study=source.study,
        simulated=sum(1 for r in rows if r.get("simulated") == "true") + said.simulated,
        design_files=design_files, arms=arms, within=within_design,
    )  # fmt: skip
    previous_changelog = ""
    with _opened_previous(previous[1]) if previous else contextlib.nullcontext() as old:
        if old is not None:
            facts.previous, facts.previous_date = previous[0], _created(old)
            facts.date = max(facts.date, facts.previous_date or facts.date)
            changelog_path = old / layout.CHANGELOG
            previous_changelog = (
                changelog_path.read_text(encoding="utf-8") if changelog_path.is_file() else ""
            )
        datapackage.write(staging, facts)
        if old is not None:
            write_sums(staging)  # provisional: the diff reads checksums
            facts.diff = diff_releases(old, staging)
            gone = {released_session_id(key, s, namespace) for s in excluded}
            # A withdrawn writer's sessions may be gone from the source as well (the curator
            # erased them): the previous release's metadata names their writer's pseudonym.
            aliases = {pseudonym(key, worker, namespace) for worker in withdrawn}
            gone |= {s for s, writer in _writers(old).items() if writer in aliases}
            facts.withdrawn_removed = [s for s in facts.diff.removed if s in gone]
            problem = check_version(
                number, previous[0], reasons(facts.diff, facts.withdrawn_removed)
            )
            if problem:
                raise BuildError(problem)
    (staging / layout.CARD).write_text(card.render(facts), encoding="utf-8")
    (staging / layout.CHANGELOG).write_text(
        changelog.render(facts, previous_changelog), encoding="utf-8"
    )
    write_sums(staging)
    return facts, redactions


@contextlib.contextmanager
def _opened_previous(path: Path) -> Iterator[Path]:
    """The previous release's folder, which the new one is compared with (an archive unpacked)."""
    try:
        with opened(path) as directory:
            yield directory
    except ArchiveError as error:  # e.g. an archive cut short by a failed copy
        raise BuildError(
            f"{error}. It is the previous release, which the new one is compared with. Fix: put "
            f"back an intact copy of {path.name} (or its folder), then build again."
        ) from None


def _writers(directory: Path) -> dict[str, str]:
    """released session id -> writer pseudonym, from a release's metadata.csv and its
    conversations ({} for what cannot be read)."""
    found = conversations.writers(directory)
    try:
        _, numbered = read_table(directory / layout.METADATA_CSV)
    except (OSError, CsvError):
        return found
    return {**found, **{row.get("session_id", ""): row.get("worker_id", "") for _, row in numbered}}


def _created(directory: Path) -> str:
    """The date of a release, YYYY-MM-DD, from its datapackage.json ("" when unreadable)."""
    try:
        package = json.loads((directory / layout.DATAPACKAGE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(package.get("created", ""))[:10]


def _survey(
    source: Source, included: list[SourceSession], released: dict[str, str],
    redactions: list[Redaction], detector: Detector,
) -> list[dict]:  # fmt: skip
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
