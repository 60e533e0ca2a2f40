"""`study release build`: from a source to a verified, versioned, anonymized release.

1. Read the source (`study.release.source`) and leave out sessions whose writer withdrew
   (`study.release.withdraw`); refuse invalid logs (`study.curation.validate`).
2. Redact every session (`study.release.redact_source`: `study.release.redaction` on all
   cores) and the survey answers; pseudonymise worker ids (`study.release.pseudonyms`).
3. Write the data files into `RELEASES/.<name>-X.Y.Z.partial/` (`study.release.contents`),
   compare them with the previous release of that name (`study.release.previous`) and check the
   version against the rules (`study.release.versioning`).
4. Write datapackage.json, the card, the CHANGELOG and SHA256SUMS, then verify the whole folder
   (`study.release.verify`, including the leak scan with the source's raw worker ids). A
   failure deletes the partial folder: nothing is released.
5. Write the curator's redaction report (`study.release.redaction_report`) and the
   re-identification table beside the key and the archive under a hidden name, then rename the
   folder (`study.release.publish`) to `RELEASES/<name>-X.Y.Z/` (the one
   step that publishes the version) and the archive into place. A crash before the rename
   leaves the version free; after it, the next build moves the archive into place.
   A disk that fills or a folder that turns read-only before the rename is a BuildError naming
   the path and the fix, with nothing of the build left in RELEASES.

Session ids are released under fresh keyed ids (`study.release.pseudonyms`), never the ids the
study server answers to; `--exclude SESSION` leaves a session out (e.g. one that cannot be
replayed).

Deterministic: the same source, key and version give byte-identical files; dates come from the
sessions' timestamps, never from the clock.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Sequence

from study.release import contact, creators, design, layout, preflight, publish, redact_source, redaction_report
from study.release.archive import write_archive
from study.release.contents import write_release
from study.release.facts import ReleaseFacts
from study.release.keys import load_key
from study.release.leakscan import LeakScanner
from study.release.preflight import BuildError
from study.release.pseudonyms import ReidentificationTable
from study.release.redaction_report import Redaction
from study.release.source import open_source
from study.release.verify import VerifyReport, source_id_check, verify_directory
from study.release.versioning import Version
from study.release.withdraw import load_withdrawals, near_misses
from study.store.permissions import make_public


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
    creator: Sequence[str] = (),
    funding: str | None = None,
) -> BuildResult:
    """Build the release (see the module docstring). `exclude`: session ids the curator leaves
    out (`--exclude`), e.g. a session whose log cannot be replayed. `creator` and `funding`
    (`--creator`, `--funding`): who created the dataset and who funded it, replacing a study's
    [release] values (study.release.creators)."""
    try:
        number = Version.parse(version)
        creators.check_options(creator, funding)
    except ValueError as error:
        raise BuildError(str(error)) from None
    key = load_key(key_path)
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="study-release-") as scratch:
        source = open_source(source_path, Path(scratch))
        source.creators = creators.from_options(creator, funding, source.creators)
        name = name or source.name
        if not layout.NAME.match(name):
            raise BuildError(
                f"release name {name!r}: use lower-case letters, digits, '.', '_' and '-' (--name)"
            )
        namespace = namespace or name
        publish.finish_interrupted(out)
        previous = preflight.previous_release(out, name, number, key)
        withdrawals = load_withdrawals(key)
        # The key's list, and a study's own (`study withdraw --study`, study.store.withdrawals).
        withdrawn = {entry.worker_id for entry in withdrawals} | source.withdrawn
        left_out = preflight.curator_exclusions(source, exclude)
        preflight.check_logs(source, left_out)
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
        unmatched = [w.note() for w in withdrawals if w.worker_id not in writers]
        if misses := near_misses(withdrawals, writers):
            meant = {recorded for recorded, _ in misses}
            notes = [w.note() for w in withdrawals if w.worker_id in meant]
            raise BuildError(
                f"{len(notes)} recorded withdrawal(s) match a writer of this source or of a release "
                f"only in another case or spacing ({'; '.join(notes)}). Worker ids are compared "
                "exactly (MTurk's are case-sensitive), so that writer's sessions would be "
                "released. Fix: record the withdrawal again with the id as the study's data spells "
                "it (the worker_id column of `study export`'s metadata.csv): study withdraw "
                f"WORKER_ID --key {shlex.quote(str(key.path))}. Nothing was released."
            )
        detector = redact_source.detector_for(known_ids)
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
        archive = out / (dirname + layout.ARCHIVE_SUFFIX)
        pending = publish.pending_archive(archive)
        try:
            facts, redactions, report_file = _write_and_publish(
                staging, pending, source, included, talks, excluded, withdrawn, left_out, table, key,
                name, namespace, license, number, previous, known_ids, processes, progress, detector,
                report_path, dirname,
            )  # fmt: skip
        except OSError as error:
            # A disk that fills or a folder turned read-only before the rename, the one step
            # that publishes: nothing is published, so nothing of this build stays.
            shutil.rmtree(staging, ignore_errors=True)
            if pending.exists():
                with contextlib.suppress(OSError):  # else the next build removes it
                    pending.unlink()
            raise BuildError(
                f"{error.filename or out}: cannot write the release ({error.strerror or error}); "
                f"{name} {number} was not released and nothing of it is left in {out}. Fix: free "
                "space on that disk, or choose an --out folder (and a --report file) you can "
                "write to, and build again."
            ) from None
        os.replace(pending, archive)
        target = out / dirname
    return BuildResult(
        target, archive, report_file, facts, redactions, source.without_metadata, sorted(left_out),
        source.unconfirmed, unmatched,
    )


def _write_and_publish(
    staging, pending, source, included, talks, excluded, withdrawn, left_out, table, key, name,
    namespace, license, number, previous, known_ids, processes, progress, detector, report_path,
    dirname,
):  # fmt: skip
    """Steps 3 to 5 up to the folder's rename (module docstring): the facts, the redactions and
    the redaction report's path."""
    if staging.exists():
        shutil.rmtree(staging)  # left by an interrupted build
    try:
        (staging / layout.SESSIONS).mkdir(parents=True)
        facts, redactions = write_release(
            staging, source, included, talks, excluded, withdrawn, left_out, table, key, name,
            namespace, license, number, previous, known_ids, processes, progress,
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
    write_archive(staging, pending, facts.mtime, top=dirname)
    make_public(pending)
    publish.publish(staging, staging.parent / dirname)
    return facts, redactions, report_file


def _released_ids(table: ReidentificationTable, namespace: str) -> dict[str, str]:
    """study session id -> released id, as the table has issued them in `namespace`."""
    return {study_id: released for released, study_id in table.sessions.get(namespace, {}).items()}
