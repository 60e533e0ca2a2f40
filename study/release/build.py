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
5. Write the curator's redaction report and the re-identification table beside the key and
   the archive under a hidden name, then rename the folder to `RELEASES/<name>-X.Y.Z/` (the one
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
import csv
import io
import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection

from study.curation.formats import Session, read_session
from study.curation.metadata import official_metadata
from study.curation.runner import run
from study.curation.stats import session_stats
from study.paths import schemas_dir
from study.release import card, changelog, contact, datapackage, design, layout, tables
from study.release.archive import opened, write_archive
from study.release.checksums import write_sums
from study.release.diff import ReleaseDiff, diff_releases
from study.release.facts import ReleaseFacts, utc_date
from study.release.keys import ReleaseKey, load_key
from study.store.permissions import make_public, private_folder, write_private
from study.release.leakscan import LeakScanner
from study.release.pii import Detector, redact_text
from study.release.pseudonyms import ReidentificationTable, released_session_id
from study.release.redaction import Redaction, redact_session
from study.release.source import Source, SourceSession, open_source
from study.release.verify import VerifyReport, source_id_check, verify_directory
from study.release.versioning import MAJOR, MINOR, Reason, Version, check_version
from study.release.withdraw import withdrawn_worker_ids

REPORT_COLUMNS = ("session_id", "study_session_id", "where", "entity", "original", "replacement", "score", "recognizer")


class BuildError(Exception):
    """The build stopped; nothing was released. The message says why and what to do."""


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
        _finish_interrupted(out)
        previous = _previous_release(out, name, number)
        withdrawn = withdrawn_worker_ids(key)
        left_out = _curator_exclusions(source, exclude)
        included = [
            s for s in source.sessions
            if s.worker_id not in withdrawn and s.session_id not in left_out
        ]  # fmt: skip
        excluded = {s.session_id for s in source.sessions if s.worker_id in withdrawn}
        _check_sessions(source, included, processes)

        table = ReidentificationTable(key)
        judges = design.judge_ids(source.path) if source.kind == "study" else set()
        known_ids = frozenset(source.worker_ids | table.worker_ids() | withdrawn | judges)
        detector = _detector(known_ids)
        if source.study:
            try:
                contact.check_consent(
                    source.study.consent_text, source.study.contact, detector,
                    where=f"{Path(source_path) / 'study.toml'}",
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
                staging, source, included, excluded, table, key, name, namespace, license, number,
                previous, known_ids, processes, progress,
            )  # fmt: skip
            report = VerifyReport(dirname)
            verify_directory(
                staging,
                report,
                scanner=LeakScanner(known_ids, detector, processes),
                processes=processes,
            )
            report.checks.append(source_id_check(staging, {s.session_id for s in source.sessions}))
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
        # complete release whose archive the next build moves into place (`_finish_interrupted`).
        report_file = (
            Path(report_path) if report_path else key.companion(".redactions") / f"{dirname}.csv"
        )
        _write_report(report_file, redactions, _released_ids(table, namespace))
        table.save()
        archive = out / (dirname + layout.ARCHIVE_SUFFIX)
        pending = _pending_archive(archive)
        write_archive(staging, pending, facts.mtime, top=dirname)
        make_public(pending)
        _publish(staging, out / dirname)
        os.replace(pending, archive)
        target = out / dirname
    return BuildResult(
        target, archive, report_file, facts, redactions, source.without_metadata, sorted(left_out),
        source.unconfirmed,
    )


def _curator_exclusions(source: Source, exclude: Collection[str]) -> set[str]:
    known = {s.session_id for s in source.sessions}
    wanted = {session_id.strip() for session_id in exclude}
    unknown = sorted(wanted - known)
    if unknown:
        raise BuildError(
            f"--exclude {unknown[0]}: no such session in {source.path}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            + ". Fix: copy the id from `study status` or the error that named it."
        )
    return wanted


PENDING_SUFFIX = ".pending"


def _pending_archive(archive: Path) -> Path:
    # Hidden, and not named like a release, so it never counts as a version.
    return archive.with_name(f".{archive.name}{PENDING_SUFFIX}")


def _publish(staging: Path, target: Path) -> None:
    """Rename the verified folder into place: from here on the version exists. A release is
    for publication, so it is made readable by everyone on purpose, whatever the umask (the
    one thing this toolkit writes so: study.store.permissions)."""
    make_public(staging)
    os.rename(staging, target)


def _finish_interrupted(out: Path) -> None:
    """Complete or undo what a build interrupted after its verification left behind.

    A pending archive whose release folder is in place belongs to a published release: it is
    moved into place. One without its folder belongs to a build that never published: removed.
    """
    if not out.is_dir():
        return
    for pending in sorted(out.glob(f".*{layout.ARCHIVE_SUFFIX}{PENDING_SUFFIX}")):
        archive = out / pending.name[1 : -len(PENDING_SUFFIX)]
        folder = out / archive.name[: -len(layout.ARCHIVE_SUFFIX)]
        if folder.is_dir() and not archive.exists():
            os.replace(pending, archive)
        else:
            pending.unlink()


def _released_ids(table: ReidentificationTable, namespace: str) -> dict[str, str]:
    """study session id -> released id, as the table has issued them in `namespace`."""
    return {study_id: released for released, study_id in table.sessions.get(namespace, {}).items()}


def _previous_release(out: Path, name: str, number: Version) -> tuple[Version, Path] | None:
    releases = layout.existing_releases(out, name)
    if number in releases:
        paths = ", ".join(str(p) for p in releases[number])
        raise BuildError(
            f"{name} {number} already exists ({paths}); a release is never overwritten. "
            "Build the next version."
        )
    later = sorted(v for v in releases if v > number)
    if later:
        raise BuildError(
            f"{name} {later[-1]} already exists; the new version must be greater than {later[-1]}."
        )
    if not releases:
        return None
    latest = max(releases)
    # Prefer the folder; an archive alone will do.
    paths = sorted(releases[latest], key=lambda p: not p.is_dir())
    return latest, paths[0]


def _check_sessions(
    source: Source, included: list[SourceSession], processes: int | None = None
) -> None:
    from study.curation.runner import validate_paths
    from study.curation.validate import ERROR

    if not included:
        unconfirmed = (
            f" {len(source.unconfirmed)} finished session(s) are not confirmed yet: run "
            "`study mturk sync` (or `study prolific sync`) first, or list lab access codes in "
            "[session] access_codes_file."
            if source.unconfirmed else ""
        )  # fmt: skip
        raise BuildError(
            f"{source.path}: no sessions to release (all withdrawn, or none finished).{unconfirmed}"
        )
    nameless = [s.session_id for s in included if not s.worker_id]
    if nameless:
        raise BuildError(
            f"{len(nameless)} session(s) have no worker_id in the source metadata, e.g. "
            f"{nameless[0]}: "
            "without one a withdrawal could not be honoured. Fill it in or remove the session."
        )
    broken, ids = [], []
    by_path = {Path(session.path): session for session in included}
    for result in validate_paths(list(by_path), processes=processes, progress=False):
        session = by_path[Path(result.file)]
        for issue in result.issues:
            if issue.severity == ERROR:
                line = f" line {issue.line}" if issue.line else ""
                subject = f"{issue.field} " if issue.field else ""
                # A study's sessions are exported to a scratch folder: name the session.
                where = session.path if source.kind == "folder" else f"session {session.session_id}"
                broken.append(f"{where}{line}: {subject}{issue.message}")
                ids.append(session.session_id)
                break
    if broken:
        options = " ".join(f"--exclude {session_id}" for session_id in ids[:10])
        raise BuildError(
            f"{len(broken)} session(s) are not valid logs (`study curate validate` lists every "
            "problem):\n  " + "\n  ".join(broken[:10])
            + f"\nFix them, or build without them: add {options}"
        )


def _write_release(
    staging, source, included, excluded, table, key: ReleaseKey, name, namespace, license,
    number, previous, known_ids, processes, progress,
) -> tuple[ReleaseFacts, list[Redaction]]:  # fmt: skip
    redactions: list[Redaction] = []
    rows, stats, formats, firsts, lasts = [], [], Counter(), [], []
    by_id = {s.session_id: s for s in included}
    released = {s.session_id: table.issue_session(s.session_id, namespace) for s in included}
    jobs = [(session, known_ids, released[session.session_id]) for session in included]
    for processed in run(_process, jobs, processes=processes, progress=progress, failed=_failed):
        (staging / layout.session_path(processed.session_id)).write_bytes(processed.data)
        redactions += processed.redactions
        session = by_id[processed.source_id]
        alias = table.issue(session.worker_id, namespace)
        rows.append(
            tables.metadata_row(session.metadata, alias, processed.official, processed.session_id)
        )
        stats.append(processed.stats)
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
    metadata = {row["session_id"]: row for row in rows}
    tables.write_csv(
        staging / layout.SUMMARY_CSV, tables.SUMMARY_HEADER, tables.summary_rows(stats, metadata)
    )
    design_files = []
    if source.kind == "study":  # arms, judging ratings, preregistration (study.release.design)
        design_files = design.write(
            staging, source.path, released, lambda worker: table.issue(worker, namespace)
        )
    (staging / layout.SCHEMAS).mkdir()
    for schema in sorted(schemas_dir().glob("coauthor-*.schema.json")):
        shutil.copyfile(schema, staging / layout.SCHEMAS / schema.name)

    facts = ReleaseFacts(
        name=name, version=number, namespace=namespace, license=license,
        key_fingerprint=key.fingerprint, source_kind=source.kind,
        date=utc_date(max(lasts)), first_date=utc_date(min(firsts)), last_date=utc_date(max(lasts)),
        sessions=len(rows), writers=len({r["worker_id"] for r in rows}),
        events=sum(row["num_event"] for row in rows), formats=formats,
        genres=Counter(r["genre"] for r in rows if r["genre"]),
        prompts=Counter(r["prompt_code"] for r in rows if r["prompt_code"]),
        conditions=Counter((r["genre"], r["temperature"], r["frequency_penalty"]) for r in rows),
        survey_sessions=len(survey_rows),
        survey_columns=list(source.survey_columns) if survey_rows else [],
        redacted_by_entity=Counter(r.entity for r in redactions if r.entity != "IN_CONTEXT"),
        redacted_by_place=Counter(_place(r) for r in redactions),
        redacted_sessions=len({r.session_id for r in redactions}),
        withdrawn_excluded=len(excluded), study=source.study,
        simulated=sum(1 for r in rows if r.get("simulated") == "true"), design_files=design_files,
    )  # fmt: skip
    previous_changelog = ""
    with opened(previous[1]) if previous else contextlib.nullcontext() as old:
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
            facts.withdrawn_removed = [s for s in facts.diff.removed if s in gone]
            problem = check_version(
                number, previous[0], _reasons(facts.diff, facts.withdrawn_removed)
            )
            if problem:
                raise BuildError(problem)
    (staging / layout.CARD).write_text(card.render(facts), encoding="utf-8")
    (staging / layout.CHANGELOG).write_text(
        changelog.render(facts, previous_changelog), encoding="utf-8"
    )
    write_sums(staging)
    return facts, redactions


def _created(directory: Path) -> str:
    """The date of a release, YYYY-MM-DD, from its datapackage.json ("" when unreadable)."""
    try:
        package = json.loads((directory / layout.DATAPACKAGE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(package.get("created", ""))[:10]


def _reasons(diff: ReleaseDiff, withdrawn: list[str]) -> list[Reason]:
    reasons = []
    if diff.rekeyed:
        reasons.append(Reason(MAJOR, "the pseudonyms were re-keyed (another key or namespace)"))
    if diff.layout_changed:
        reasons.append(Reason(MAJOR, "the release layout changed"))
    for column in diff.columns_removed:
        reasons.append(Reason(MAJOR, f"metadata column {column} was removed"))
    for name in diff.files_removed:
        reasons.append(Reason(MAJOR, f"file {name} was removed"))
    others = [s for s in diff.removed if s not in set(withdrawn)]
    if others:
        why = f"{len(others)} session(s) were removed for reasons other than withdrawal"
        reasons.append(Reason(MAJOR, why))
    if diff.added:
        reasons.append(Reason(MINOR, f"{len(diff.added)} session(s) were added"))
    for column in diff.columns_added:
        reasons.append(Reason(MINOR, f"metadata column {column} was added"))
    for name in diff.files_added:
        reasons.append(Reason(MINOR, f"file {name} was added"))
    return reasons


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
            redactions += [
                Redaction(session.session_id, f"survey {column}", s.entity, value[s.start : s.end],
                          redacted[s.start : s.end], s.score, s.recognizer)
                for s in spans
            ]  # fmt: skip
        rows.append(row)
    return rows


def _place(redaction: Redaction) -> str:
    if redaction.where.startswith("survey"):
        return "survey answers"
    if "Suggestions" in redaction.where:
        return "suggestion lists"
    return "session text"


def _write_report(path: Path, redactions: list[Redaction], released: dict[str, str]) -> None:
    """The curator's review list. It holds the original text (and the study's session ids), so
    it is private (mode 600)."""
    private_folder(path.parent)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(REPORT_COLUMNS)
    for r in redactions:
        writer.writerow(
            [released.get(r.session_id, ""), r.session_id, r.where, r.entity, r.original, r.replacement, r.score, r.recognizer]
        )
    write_private(path, buffer.getvalue().encode("utf-8"))
