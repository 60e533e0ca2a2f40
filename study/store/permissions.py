"""Who may read what this toolkit writes (README, "Private files").

Exports, databases, keys, the curator's redaction lists and the re-identification vault hold
worker ids and every keystroke: they are created readable by their owner only (files 0600,
folders 0700), whatever the umask, so a neighbour on a shared machine reads none of them. A
release built for publication is the one thing made world-readable, on purpose
(`make_public`), also whatever the umask.

Only folders this toolkit creates are set 0700: a folder the researcher made (their home, the
current directory) keeps its mode, and the files written into it are private anyway.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
PUBLIC_FILE = 0o644
PUBLIC_FOLDER = 0o755


def private_folder(folder: Path) -> Path:
    """`folder`, with every missing folder on its way created 0700; returns it."""
    folder = Path(folder)
    missing = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for created in reversed(missing):
        try:
            os.mkdir(created, PRIVATE_FOLDER)
        except FileExistsError:
            continue  # made meanwhile by another process: its maker chose the mode
        os.chmod(created, PRIVATE_FOLDER)  # mkdir's mode is cut by the umask; this is not
    return folder


def write_private(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write a file only its owner can read (mode 600 whatever the umask).

    `exclusive`: fail with FileExistsError instead of replacing. Otherwise the file is written
    under a temporary name and renamed, so a crash never leaves half a file.
    """
    path = Path(path)
    target = path if exclusive else path.with_name(f".{path.name}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    if not exclusive and target.exists():
        target.unlink()
    descriptor = os.open(target, flags, PRIVATE_FILE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    if not exclusive:
        os.replace(target, path)


def make_public(path: Path) -> None:
    """Make `path` (a file, or a folder and everything in it) readable by everyone: for a
    release meant for publication, never for anything else."""
    path = Path(path)
    if not path.is_dir():
        os.chmod(path, PUBLIC_FILE)
        return
    os.chmod(path, PUBLIC_FOLDER)
    for folder, folders, files in os.walk(path):
        for name in folders:
            os.chmod(os.path.join(folder, name), PUBLIC_FOLDER)
        for name in files:
            os.chmod(os.path.join(folder, name), PUBLIC_FILE)


def is_private(path: Path) -> bool:
    """Whether no one but the owner may read, write or enter `path`."""
    return not Path(path).stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO)
