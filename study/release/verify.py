"""`study release verify`: re-check a release folder or archive; all checks must hold.

1. **layout**: the files every release has (`study.release.layout.REQUIRED`), one log per
   metadata row and no log without one, every `worker_id` a pseudonym, metadata.parquet
   equal to metadata.csv.
2. **checksums**: every file matches SHA256SUMS, none is missing and none was added.
3. **schemas**: the `frictionless` validator accepts datapackage.json (every table row against
   its Table Schema, every file's size and SHA-256), every session passes the curation
   core's validation (`study.curation.validate`: its record schema in `schemas/`, replay), and
   every line of conversations.jsonl its schema (`study.release.conversations.problems`).
4. **within-subjects design** (a release that has within.json): `study.release.within.problems`,
   the file against its schema, metadata.csv (every session, its writer and arm) and itself.
5. **leak scan**: `study.release.leakscan`; with the re-identification table (`--key`), also
   every worker id that any release built with that key has pseudonymised. The study's contact,
   declared in datapackage.json (study.release.contact), passes in the card and there only, and
   the check's line names it.
6. **session ids** (with `--key`, and always in `study release build`): no file holds a study
   session id that a release re-keyed (`study.release.pseudonyms.released_session_id`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from study.release import contact, conversations, datapackage, within
from study.release.archive import ArchiveError, opened
from study.release.checksums import check_sums
from study.release.csvtable import CsvError, read_table
from study.release.layout import (
    CARD, METADATA_CSV, METADATA_PARQUET, REQUIRED, SESSIONS, release_files,
)  # fmt: skip
from study.release.leakscan import LeakScanner
from study.release.pseudonyms import is_pseudonym
from study.release.tables import read_metadata_parquet


@dataclass
class Check:
    name: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyReport:
    target: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def render(self, limit: int = 20) -> str:
        lines = [f"{self.target}:"]
        for check in self.checks:
            lines.append(f"  {'ok  ' if check.ok else 'FAIL'} {check.name}")
            for problem in check.problems[:limit]:
                lines.append(f"       {problem}")
            if len(check.problems) > limit:
                lines.append(f"       ... and {len(check.problems) - limit} more")
        lines.append("verified: every check holds" if self.ok else "NOT verified")
        return "\n".join(lines)


def verify(path: str | Path, *, known_ids: Iterable[str] = (), scanner: LeakScanner | None = None,
           processes: int | None = None, session_ids: Iterable[str] = ()) -> VerifyReport:  # fmt: skip
    path = Path(path)
    report = VerifyReport(str(path))
    try:
        with opened(path) as directory:
            verify_directory(
                directory,
                report,
                known_ids=known_ids,
                scanner=scanner or LeakScanner(known_ids, processes=processes),
                processes=processes,
            )
            session_ids = set(session_ids)
            if session_ids:
                report.checks.append(source_id_check(directory, session_ids))
    except ArchiveError as error:
        report.checks.append(Check("archive", [str(error)]))
    return report


def verify_directory(directory: Path, report: VerifyReport, *, known_ids: Iterable[str] = (),
                     scanner: LeakScanner | None = None,
                     processes: int | None = None) -> None:  # fmt: skip
    layout = Check("layout", _layout_problems(directory))
    report.checks.append(layout)
    report.checks.append(Check("checksums", check_sums(directory)))
    schemas = Check("schemas")
    if (directory / "datapackage.json").is_file():
        schemas.problems += datapackage.validate(directory)
    schemas.problems += _session_problems(directory, processes)
    schemas.problems += conversations.problems(directory)
    report.checks.append(schemas)
    if (directory / within.WITHIN).is_file():
        report.checks.append(Check(f"within-subjects design ({within.WITHIN})", within.problems(directory)))
    scanner = scanner or LeakScanner(known_ids)
    name = "leak scan"
    published = contact.from_package(directory)
    if published:
        name += f" (the study's contact, published on purpose in {CARD}: {published})"
    report.checks.append(Check(name, [leak.render() for leak in scanner.scan(directory)]))


MIN_SESSION_ID = 12


def source_id_check(directory: Path, session_ids: Iterable[str]) -> Check:
    """No file of the release holds one of the study's own session ids."""
    check = Check("session ids")
    # Only ids long enough not to occur by chance (the server's are 32 hex digits); a folder
    # source may name its sessions "P01".
    ids = sorted({i for i in session_ids if len(i) >= MIN_SESSION_ID}, key=len, reverse=True)
    if not ids:
        return check
    pattern = re.compile(b"|".join(re.escape(i.encode()) for i in ids))
    for name in release_files(directory):
        data = (directory / name).read_bytes()
        found = pattern.search(data)
        if found or pattern.search(name.encode()):
            where = "line %d" % (data.count(b"\n", 0, found.start()) + 1) if found else "file name"
            check.problems.append(
                f"{name} {where}: holds a study session id instead of its released id"
            )
    return check


def _layout_problems(directory: Path) -> list[str]:
    problems = [f"{name} is missing" for name in REQUIRED if not (directory / name).is_file()]
    if not (directory / METADATA_CSV).is_file():
        return problems
    try:
        _, numbered = read_table(directory / METADATA_CSV)
    except CsvError as error:
        return problems + [str(error).replace(f"{directory}/", "", 1)]
    rows = [row for _, row in numbered]
    logs = {p.stem for p in (directory / SESSIONS).glob("*.jsonl")}
    listed = {row.get("session_id", "") for row in rows}
    problems += [f"{SESSIONS}/{s}.jsonl: no row in {METADATA_CSV}" for s in sorted(logs - listed)]
    problems += [
        f"{METADATA_CSV}: session {s} has no log in {SESSIONS}/" for s in sorted(listed - logs)
    ]
    for number, row in numbered:
        if not is_pseudonym(row.get("worker_id", "")):
            problems.append(
                f"{METADATA_CSV} line {number}: worker_id is not a pseudonym (w + 20 hex digits)"
            )
    if (directory / METADATA_PARQUET).is_file():
        try:
            typed = read_metadata_parquet(directory / METADATA_PARQUET)
        except Exception as error:  # noqa: BLE001 - any reader error means a broken file
            problems.append(f"{METADATA_PARQUET}: unreadable ({error})")
        else:
            if [(r["session_id"], r["worker_id"]) for r in typed] != [
                (r["session_id"], r["worker_id"]) for r in rows
            ]:
                problems.append(
                    f"{METADATA_PARQUET}: its sessions or worker ids differ from {METADATA_CSV}"
                )
    return problems


def _session_problems(directory: Path, processes: int | None = None) -> list[str]:
    """Every error of every session log (on all cores; a check that crashes is one)."""
    from study.curation.runner import validate_paths
    from study.curation.validate import ERROR

    problems = []
    paths = sorted((directory / SESSIONS).glob("*.jsonl"))
    for result in validate_paths(paths, processes=processes, progress=False):
        for issue in result.issues:
            if issue.severity == ERROR:
                line = f" line {issue.line}" if issue.line else ""
                subject = f"{issue.field} " if issue.field else ""
                name = Path(result.file).name
                problems.append(f"{SESSIONS}/{name}{line}: {subject}{issue.message}")
    return problems
