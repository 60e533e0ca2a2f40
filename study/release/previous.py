"""The previous release of the same name, which a new version is compared with (study.release.build, step 3).

Its date bounds the new one's from below, its CHANGELOG is continued, the difference between
the two (study.release.diff) is the new CHANGELOG's entry, and that difference must fit the
version number chosen (study.release.versioning). Sessions gone because their writer withdrew
are told apart from sessions the curator left out, even when the curator has since erased a
withdrawn writer's sessions from the source.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import Iterator

from study.release import archive, conversations, layout
from study.release.checksums import write_sums
from study.release.csvtable import CsvError, read_table
from study.release.diff import diff_releases, reasons
from study.release.facts import ReleaseFacts
from study.release.keys import ReleaseKey
from study.release.preflight import BuildError, another_key
from study.release.pseudonyms import pseudonym, released_session_id
from study.release.versioning import Version, check_version


@contextlib.contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The previous release's folder, which the new one is compared with (an archive unpacked)."""
    try:
        with archive.opened(path) as directory:
            yield directory
    except archive.ArchiveError as error:  # e.g. an archive cut short by a failed copy
        raise BuildError(
            f"{error}. It is the previous release, which the new one is compared with. Fix: put "
            f"back an intact copy of {path.name} (or its folder), then build again."
        ) from None


def follow(facts: ReleaseFacts, number: Version, old: Path) -> str:
    """Date `facts` as following the release `number` in `old` (never before it), and return
    the CHANGELOG it carries ("" when it has none)."""
    facts.previous, facts.previous_date = number, _created(old)
    facts.date = max(facts.date, facts.previous_date or facts.date)
    changelog_path = old / layout.CHANGELOG
    return changelog_path.read_text(encoding="utf-8") if changelog_path.is_file() else ""


def compare(
    facts: ReleaseFacts, staging: Path, old: Path, key: ReleaseKey, excluded: Collection[str],
    withdrawn: Collection[str], left_out: Collection[str] = (),
) -> None:  # fmt: skip
    """Give `facts` the difference between the release in `staging` and the previous one in
    `old`, and which of the sessions gone were withdrawn (`excluded`: the study's ids of the
    withdrawn sessions still in the source; `withdrawn`: the withdrawn worker ids) or left out
    by the curator (`left_out`: the study's ids given to `--exclude`); raise BuildError when
    the version chosen does not fit the difference."""
    write_sums(staging)  # provisional: the diff reads checksums
    facts.diff = diff_releases(old, staging)
    gone = {released_session_id(key, s, facts.namespace) for s in excluded}
    # A withdrawn writer's sessions may be gone from the source as well (the curator
    # erased them): the previous release's metadata names their writer's pseudonym.
    aliases = {pseudonym(key, worker, facts.namespace) for worker in withdrawn}
    gone |= {s for s, writer in _writers(old).items() if writer in aliases}
    facts.withdrawn_removed = [s for s in facts.diff.removed if s in gone]
    chosen = {released_session_id(key, s, facts.namespace) for s in left_out}
    facts.left_out_removed = [s for s in facts.diff.removed if s in chosen and s not in gone]
    problem = check_version(facts.version, facts.previous, reasons(facts.diff, facts.withdrawn_removed))
    if problem:
        other = another_key([old], key) if facts.diff.rekeyed else ""
        raise BuildError(f"{problem} {other}" if other else problem)


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
