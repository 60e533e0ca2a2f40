"""How a verified release becomes public (study.release.build, step 5), and how a build that was
interrupted on the way is finished.

The folder is renamed into place in one step (`publish`), which is what makes the version
exist; the archive waits beside it under a hidden name (`pending_archive`) until then. The next
build first finishes what an interrupted one left (`finish_interrupted`).
"""

from __future__ import annotations

import os
from pathlib import Path

from study.release import layout
from study.store.permissions import make_public

PENDING_SUFFIX = ".pending"


def pending_archive(archive: Path) -> Path:
    # Hidden, and not named like a release, so it never counts as a version.
    return archive.with_name(f".{archive.name}{PENDING_SUFFIX}")


def publish(staging: Path, target: Path) -> None:
    """Rename the verified folder into place: from here on the version exists. A release is
    for publication, so it is made readable by everyone on purpose, whatever the umask (the
    one thing this toolkit writes so: study.store.permissions)."""
    make_public(staging)
    os.rename(staging, target)


def finish_interrupted(out: Path) -> None:
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
