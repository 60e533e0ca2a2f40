"""What a release folder holds, and how releases are named.

```
RELEASES/
  <name>-X.Y.Z/
    README.md            dataset card: Hugging Face YAML header + Datasheets for Datasets (card.py)
    CHANGELOG.md         every release so far, Keep a Changelog form (changelog.py)
    datapackage.json     Frictionless Data Package: each data file, its schema, its checksum
    SHA256SUMS           `sha256sum -c SHA256SUMS` checks every other file
    sessions/<session_id>.jsonl   the redacted logs, CoAuthor format (one event per line)
    metadata.csv         one row per session, CoAuthor's columns, worker_id pseudonymised
    metadata.parquet     the same rows, typed
    survey.csv           survey answers, redacted (only when the source has any)
    stats.csv            the curation core's statistics per session (study.curation.stats)
    summary.csv          Table 3-style means by genre and by condition
    conversations.jsonl  a chat study's or chat arm's conversations, redacted (conversations.py)
    schemas/coauthor-*.schema.json   the record schemas the sessions follow (and chat-*.schema.json
                                     the conversations', within-release.schema.json
                                     within.json's)
    arms.json, judging/, preregistration.json   a study's design (design.py)
    within.json          a within-subjects study's design: participants, rows, positions (within.py)
  <name>-X.Y.Z.tar.gz    the same folder, as a deterministic archive (archive.py)
```
"""

from __future__ import annotations

import re
from pathlib import Path

from study.release.versioning import Version

CARD = "README.md"
CHANGELOG = "CHANGELOG.md"
DATAPACKAGE = "datapackage.json"
SUMS = "SHA256SUMS"
SESSIONS = "sessions"
METADATA_CSV = "metadata.csv"
METADATA_PARQUET = "metadata.parquet"
SURVEY_CSV = "survey.csv"
STATS_CSV = "stats.csv"
SUMMARY_CSV = "summary.csv"
CONVERSATIONS = "conversations.jsonl"
SCHEMAS = "schemas"
ARCHIVE_SUFFIX = ".tar.gz"

REQUIRED = (CARD, CHANGELOG, DATAPACKAGE, SUMS, METADATA_CSV, METADATA_PARQUET, STATS_CSV)
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_RELEASE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._-]*)-(?P<version>\d+\.\d+\.\d+)$")


def release_dirname(name: str, version: Version) -> str:
    return f"{name}-{version}"


def parse_release_name(text: str) -> tuple[str, Version] | None:
    """("coauthor", 1.2.0) from "coauthor-1.2.0" or "coauthor-1.2.0.tar.gz"."""
    if text.endswith(ARCHIVE_SUFFIX):
        text = text[: -len(ARCHIVE_SUFFIX)]
    match = _RELEASE.match(text)
    if not match:
        return None
    return match["name"], Version.parse(match["version"])


def existing_releases(out: Path, name: str) -> dict[Version, list[Path]]:
    """Every version of `name` in `out`, as a folder, an archive or both."""
    found: dict[Version, list[Path]] = {}
    if not out.is_dir():
        return found
    for entry in sorted(out.iterdir()):
        parsed = parse_release_name(entry.name)
        if parsed and parsed[0] == name:
            found.setdefault(parsed[1], []).append(entry)
    return found


def session_path(session_id: str) -> str:
    return f"{SESSIONS}/{session_id}.jsonl"


def release_files(directory: Path) -> list[str]:
    """Every file of a release folder, as sorted POSIX paths relative to it."""
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
