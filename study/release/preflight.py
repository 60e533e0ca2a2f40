"""What `study release build` checks before it writes anything (study.release.build, step 1):
the curator's `--exclude` list names sessions of the source, every session a folder's
metadata.csv lists has its log (or is excluded), the version is new and greater
than every release of that name, and the sessions can be released (there are some, logs or
conversations, each names its worker, for withdrawals, and each log is valid). A failure is a BuildError: nothing is
released, and the message says what to do.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Collection

from study.release import layout
from study.release.keys import ReleaseKey
from study.release.source import Source, SourceConversation, SourceSession
from study.release.versioning import Version


class BuildError(Exception):
    """The build stopped; nothing was released. The message says why and what to do."""


def curator_exclusions(source: Source, exclude: Collection[str]) -> set[str]:
    known = source.session_ids
    wanted = {session_id.strip() for session_id in exclude}
    unknown = sorted(wanted - known)
    if unknown:
        raise BuildError(
            f"--exclude {unknown[0]}: no such session in {source.path}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            + ". Fix: copy the id from `study status` or the error that named it."
        )
    return wanted


def check_logs(source: Source, left_out: Collection[str]) -> None:
    """A folder's metadata rows whose log is missing (a copy that lost files) stop the build,
    unless the curator leaves those sessions out."""
    absent = [session_id for session_id in source.without_log if session_id not in left_out]
    if absent:
        folder = source.path / "sessions" if (source.path / "sessions").is_dir() else source.path
        raise BuildError(
            f"{source.path / 'metadata.csv'}: {len(absent)} session(s) have no file in {folder}, "
            f"e.g. {absent[0]}.jsonl. Fix: copy the missing logs into {folder} from where the "
            "data came from, or build without them: add "
            + " ".join(f"--exclude {shlex.quote(session_id)}" for session_id in absent)
        )


def previous_release(
    out: Path, name: str, number: Version, key: ReleaseKey | None = None
) -> tuple[Version, Path] | None:
    releases = layout.existing_releases(out, name)
    if not releases:
        return None
    # Another dataset may already hold the name (every `study init` study is "coauthor"): its
    # releases then answer to another key, and "build the next version" would continue them.
    other = another_key(releases[max(releases)], key)
    if number in releases:
        paths = ", ".join(str(p) for p in releases[number])
        raise BuildError(
            f"{name} {number} already exists ({paths}); a release is never overwritten. "
            + (other or next_versions(max(releases)))
        )
    later = sorted(v for v in releases if v > number)
    if later:
        raise BuildError(
            f"{name} {later[-1]} already exists; the new version must be greater than {later[-1]}."
            + (f" {other}" if other else "")
        )
    latest = max(releases)
    # Prefer the folder; an archive alone will do.
    paths = sorted(releases[latest], key=lambda p: not p.is_dir())
    return latest, paths[0]


def next_versions(latest: Version) -> str:
    """The versions that may follow `latest`, by the rules of study.release.versioning."""
    patch = Version(latest.major, latest.minor, latest.patch + 1)
    minor, major = Version(latest.major, latest.minor + 1, 0), Version(latest.major + 1, 0, 0)
    return (
        f"Build the next version: --version {patch} for corrections or a withdrawal, {minor} "
        f"when sessions, columns or files are added, {major} when any are removed or renamed "
        "(README, Versioning; the build checks the step)."
    )


def another_key(paths: list[Path], key: ReleaseKey | None) -> str:
    """What to do when the release at `paths` was built with a key other than `key` ("" when
    it was built with it, or its folder cannot say: an archive alone, an unreadable package)."""
    folder = next((p for p in paths if p.is_dir()), None)
    if key is None or folder is None:
        return ""
    try:
        package = json.loads((folder / layout.DATAPACKAGE).read_text(encoding="utf-8"))
        theirs = str(package["study"]["key_fingerprint"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if theirs == key.fingerprint:
        return ""
    return (
        f"{folder} was built with another key (fingerprint {theirs}; {key.path} has "
        f"{key.fingerprint}). Fix: if this source is another dataset, give its releases their "
        "own name with --name (or another --out); if it is the same dataset, build with the "
        "key its releases were built with."
    )


def check_sessions(
    source: Source, included: list[SourceSession], processes: int | None = None,
    conversations: list[SourceConversation] = (),
) -> None:  # fmt: skip
    """`conversations`: those released (a chat study's sessions are nothing else)."""
    from study.curation.runner import validate_paths
    from study.curation.validate import ERROR

    if not included and not conversations:
        # A chat study's sessions are its conversations: say so in its words.
        chat = source.study is not None and source.study.min_exchanges is not None
        what = "conversations" if chat else "sessions"
        unconfirmed = (
            f" {len(source.unconfirmed)} finished {what[:-1]}(s) are not confirmed yet: for crowd "
            "workers run `study mturk sync` (or `study prolific sync`) first; a lab session counts "
            "once its access code is listed in the file [session] access_codes_file names."
            if source.unconfirmed else ""
        )  # fmt: skip
        raise BuildError(
            f"{source.path}: no {what} to release (all withdrawn, or none finished).{unconfirmed}"
        )
    nameless = [s.session_id for s in [*included, *conversations] if not s.worker_id]
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
