"""What every `study backup` shares, SQLite's (study.store.sqlite_backup) and PostgreSQL's
(study.store.pg_backup): where a backup goes by default, and how it gets there. A backup is
written under a temporary name beside its final one and given the final name only once it
is complete and checked, so a backup cut short (a full disk, a killed command) never stands
under the name a researcher would restore from. It holds worker ids and every keystroke:
private like the database (README, "Private files")."""

from __future__ import annotations

import os
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from study import out_file
from study.store.permissions import PRIVATE_FILE, private_folder

BACKUPS_FOLDER = "backups"


class BackupError(Exception):
    """A backup that was not made, said with its fix; nothing is left under the final name."""


@dataclass(frozen=True)
class Backup:
    path: Path
    sessions: int
    events: int
    checked: str  # what was checked of the copy, in words


def default_path(directory: Path, now: float, suffix: str) -> Path:
    """`backups/study-2026-12-01T10-30-00Z.db` beside the study: UTC, with no colon (which
    Windows and some archive tools refuse in a file name), so that names sort by time."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(now))
    return Path(directory) / BACKUPS_FOLDER / f"study-{stamp}{suffix}"


def refuse_existing(out: Path, overwrite: bool) -> None:
    if out_file.is_stream(out):  # a rename would put the backup in place of /dev/null or a pipe
        raise BackupError(f"{out} is not a file but a device or a pipe; nothing was written. Fix: "
                          "give --out a file name: a backup is a file that a restore reads.")
    if out.exists() and not overwrite:
        raise BackupError(f"{out} already exists; nothing was written. Fix: give another --out, "
                          f"or add --overwrite to replace it.")
    if out.is_dir():
        raise BackupError(f"{out} is a folder. Fix: give --out a file name, e.g. {out / 'study.db'}.")


@contextmanager
def written_then_placed(out: Path, overwrite: bool) -> Iterator[Path]:
    """The temporary file (empty, private, in `out`'s folder) to write the backup into; once
    the block ends without an error, it is flushed to disk and renamed to `out`. On any error,
    or an interrupt, it is removed and `out` is left as it was."""
    out = Path(out)
    refuse_existing(out, overwrite)
    try:
        private_folder(out.parent)
        # In the same folder, so that the rename is one step of one file system.
        partial = out.with_name(f".{out.name}.partial-{secrets.token_hex(4)}")
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except OSError as error:
        raise BackupError(f"cannot write the backup {out}: {error.strerror or error}. Fix: give "
                          f"--out a file in a folder you can write.") from None
    try:
        yield partial
        _flushed(partial)
        _placed(partial, out, overwrite)
    except OSError as error:
        raise BackupError(f"cannot write the backup {out}: {error.strerror or error}; nothing was "
                          f"left under that name. Fix: free space where it goes, or give another "
                          f"--out.") from None
    finally:
        partial.unlink(missing_ok=True)


def _flushed(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _placed(partial: Path, out: Path, overwrite: bool) -> None:
    if overwrite:
        os.replace(partial, out)
    else:
        # A hard link fails if `out` appeared meanwhile (another backup in the same second),
        # where a rename would replace it without a word.
        try:
            os.link(partial, out)
        except FileExistsError:
            raise BackupError(f"{out} appeared while the backup was written, and was left as it is. "
                              f"Fix: give another --out, or add --overwrite.") from None
        except OSError:  # a file system without hard links
            if out.exists():
                raise BackupError(f"{out} appeared while the backup was written, and was left as "
                                  f"it is. Fix: give another --out, or add --overwrite.") from None
            os.replace(partial, out)
    # The rename itself is on disk only once its folder is.
    folder = os.open(out.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
