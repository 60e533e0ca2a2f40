"""What changed between two releases: sessions added, removed and changed, and the structure.

Sessions are compared by id: a session is changed when its log's checksum differs (from each
release's SHA256SUMS), its conversation's line (conversations.jsonl, study.release.conversations)
or its metadata row differs. The structure (files, metadata columns, the
pseudonym key and namespace, the layout version) feeds the version rules
(`study.release.versioning`). A changed arms.json is itemised arm by arm (study.release.arms_diff).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from study.release import arms_diff, conversations
from study.release.checksums import read_sums
from study.release.csvtable import read_table
from study.release.layout import CARD, CHANGELOG, DATAPACKAGE, METADATA_CSV, SESSIONS, SUMS
from study.release.versioning import MAJOR, MINOR, Reason

# Documents that change with every release; the diff is about data and structure.
DOCUMENTS = frozenset({CARD, CHANGELOG, DATAPACKAGE, SUMS})


@dataclass
class SessionChange:
    session_id: str
    what: list[str]


@dataclass
class ReleaseDiff:
    old: str
    new: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[SessionChange] = field(default_factory=list)
    files_added: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    # What changed in arms.json, one sentence per arm (study.release.arms_diff).
    arms: list[str] = field(default_factory=list)
    columns_added: list[str] = field(default_factory=list)
    columns_removed: list[str] = field(default_factory=list)
    rekeyed: bool = False
    layout_changed: bool = False
    # The licence, old and new, when it changed (datapackage.json's `licenses`; none: "other").
    license: list[str] = field(default_factory=list)
    # What a release counts: a chat study's instances are its conversations (it has no
    # writing sessions), everything else's its sessions.
    unit: str = "session"

    def to_dict(self) -> dict:
        # `--json` keeps its keys: what a release counts is in its datapackage.json's `study`.
        return {key: value for key, value in asdict(self).items() if key != "unit"}


def release_info(directory: Path) -> dict:
    """name, version and the `study` block of a release's datapackage.json."""
    try:
        package = json.loads((directory / DATAPACKAGE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {"name": directory.name, "version": "", "study": {}, "license": "other"}
    return {
        "name": package.get("name", ""),
        "version": package.get("version", ""),
        "study": package.get("study", {}),
        # study.release.datapackage lists none for "other" (the card's word for it).
        "license": ", ".join(str(entry.get("name", "")) for entry in package.get("licenses") or []) or "other",
    }


def _metadata(directory: Path) -> tuple[list[str], dict[str, dict]]:
    try:
        columns, numbered = read_table(directory / METADATA_CSV)
    except FileNotFoundError:
        return [], {}
    return columns, {row.get("session_id", ""): row for _, row in numbered}


def _sessions(sums: dict[str, str]) -> dict[str, str]:
    prefix = f"{SESSIONS}/"
    return {
        name[len(prefix) : -len(".jsonl")]: digest
        for name, digest in sums.items()
        if name.startswith(prefix) and name.endswith(".jsonl")
    }


def diff_releases(old: Path, new: Path) -> ReleaseDiff:
    old_info, new_info = release_info(old), release_info(new)
    result = ReleaseDiff(
        old=f"{old_info['name']} {old_info['version']}".strip(),
        new=f"{new_info['name']} {new_info['version']}".strip(),
    )
    if all(not info["study"].get("sessions") and info["study"].get("conversations")
           for info in (old_info, new_info)):  # fmt: skip
        result.unit = "conversation"
    old_sums, new_sums = read_sums(old), read_sums(new)
    old_sessions, new_sessions = _sessions(old_sums), _sessions(new_sums)
    # A chat study's sessions are its conversations; a chat arm's session has both.
    old_talks, new_talks = conversations.digests(old), conversations.digests(new)
    old_ids, new_ids = set(old_sessions) | set(old_talks), set(new_sessions) | set(new_talks)
    old_columns, old_rows = _metadata(old)
    new_columns, new_rows = _metadata(new)
    result.added = sorted(new_ids - old_ids)
    result.removed = sorted(old_ids - new_ids)
    for session_id in sorted(old_ids & new_ids):
        what = []
        if old_sessions.get(session_id) != new_sessions.get(session_id):
            what.append("log")
        if old_talks.get(session_id) != new_talks.get(session_id):
            what.append("conversation")
        before, after = old_rows.get(session_id, {}), new_rows.get(session_id, {})
        columns = [c for c in new_columns if c in old_columns and before.get(c) != after.get(c)]
        if columns:
            what.append("metadata: " + ", ".join(columns))
        if what:
            result.changed.append(SessionChange(session_id, what))
    others_old = {
        n: d for n, d in old_sums.items() if not n.startswith(f"{SESSIONS}/") and n not in DOCUMENTS
    }
    others_new = {
        n: d for n, d in new_sums.items() if not n.startswith(f"{SESSIONS}/") and n not in DOCUMENTS
    }
    result.files_added = sorted(set(others_new) - set(others_old))
    result.files_removed = sorted(set(others_old) - set(others_new))
    result.files_changed = sorted(
        n for n in set(others_old) & set(others_new) if others_old[n] != others_new[n]
    )
    if arms_diff.ARMS in result.files_changed:
        result.arms = arms_diff.changes(old, new, result.unit)
    result.columns_added = [c for c in new_columns if c not in old_columns]
    result.columns_removed = [c for c in old_columns if c not in new_columns]
    old_study, new_study = old_info["study"], new_info["study"]
    result.rekeyed = old_study.get("key_fingerprint") != new_study.get(
        "key_fingerprint"
    ) or old_study.get("namespace") != new_study.get("namespace")
    result.layout_changed = old_study.get("layout") != new_study.get("layout")
    if old_info["license"] != new_info["license"]:
        result.license = [old_info["license"], new_info["license"]]
    return result


def reasons(diff: ReleaseDiff, withdrawn: list[str]) -> list[Reason]:
    """What the changes `diff` lists require of the version (the rules of study.release.versioning); `withdrawn`: the
    sessions removed because their writer withdrew."""
    found = []
    if diff.rekeyed:
        found.append(Reason(MAJOR, "the pseudonyms were re-keyed (another key or namespace)"))
    if diff.layout_changed:
        found.append(Reason(MAJOR, "the release layout changed"))
    for column in diff.columns_removed:
        found.append(Reason(MAJOR, f"metadata column {column} was removed"))
    for name in diff.files_removed:
        found.append(Reason(MAJOR, f"file {name} was removed"))
    others = [s for s in diff.removed if s not in set(withdrawn)]
    if others:
        why = f"{len(others)} {diff.unit}(s) were removed for reasons other than withdrawal"
        found.append(Reason(MAJOR, why))
    if diff.added:
        found.append(Reason(MINOR, f"{len(diff.added)} {diff.unit}(s) were added"))
    for column in diff.columns_added:
        found.append(Reason(MINOR, f"metadata column {column} was added"))
    for name in diff.files_added:
        found.append(Reason(MINOR, f"file {name} was added"))
    return found


def render(diff: ReleaseDiff) -> str:
    lines = [f"{diff.old} -> {diff.new}"]

    def section(title: str, items: list[str], sign: str) -> None:
        noun = diff.unit if len(items) == 1 else f"{diff.unit}s"
        lines.append(f"{title} {len(items)} {noun}" + (":" if items else ""))
        lines.extend(f"  {sign} {item}" for item in items)

    section("added", diff.added, "+")
    section("removed", diff.removed, "-")
    section("changed", [f"{c.session_id} ({'; '.join(c.what)})" for c in diff.changed], "~")
    others = (
        ("files added", diff.files_added), ("files removed", diff.files_removed),
        ("files changed", diff.files_changed), ("metadata columns added", diff.columns_added),
        ("metadata columns removed", diff.columns_removed),
    )  # fmt: skip
    for title, items in others:
        if items:
            lines.append(f"{title}: {', '.join(items)}")
    lines.extend(f"  {arms_diff.ARMS}: {change}" for change in diff.arms)
    if diff.license:
        lines.append(f"licence: {diff.license[0]} -> {diff.license[1]}")
    if diff.rekeyed:
        lines.append(
            "pseudonyms re-keyed: another key or namespace "
            "(writers cannot be followed across these releases)"
        )
    if diff.layout_changed:
        lines.append("release layout version changed")
    return "\n".join(lines)
