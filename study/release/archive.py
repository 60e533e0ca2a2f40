"""Deterministic `.tar.gz` archives of a release folder, and safe reading of them.

The same folder always gives the same bytes: entries sorted, every mtime set to the release's
own time (derived from the data, never "now"), uid/gid 0 with empty owner names, modes 644 and
755, and a gzip header with mtime 0 and no file name. Reading refuses anything a release never
contains (links, devices, absolute paths, `..`, entries outside the single top folder).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import Iterator

from study.curation.quote import quote
from study.release.layout import ARCHIVE_SUFFIX


class ArchiveError(ValueError):
    pass


def write_archive(directory: Path, archive: Path, mtime: int, *, top: str | None = None) -> None:
    """Write `archive` holding `directory` under the folder name `top` (default: its own name);
    written atomically."""
    top = top or directory.name
    paths = sorted(directory.rglob("*"), key=lambda p: p.relative_to(directory).as_posix())
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_info(top, tarfile.DIRTYPE, 0o755, mtime))
        for path in paths:
            name = f"{top}/{path.relative_to(directory).as_posix()}"
            if path.is_dir():
                tar.addfile(_info(name, tarfile.DIRTYPE, 0o755, mtime))
            else:
                data = path.read_bytes()
                info = _info(name, tarfile.REGTYPE, 0o644, mtime)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    temporary = archive.with_name(f".{archive.name}.partial")
    try:
        with open(temporary, "wb") as handle:
            with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=9) as gz:
                gz.write(raw.getvalue())
    except OSError:
        # A disk that fills mid-write: no half archive stays beside the release.
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    os.replace(temporary, archive)


def _info(name: str, kind: bytes, mode: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def check_members(tar: tarfile.TarFile, archive: Path) -> str:
    """The archive's single top folder; raises ArchiveError for anything unsafe or stray."""
    tops = set()
    for member in tar.getmembers():
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise ArchiveError(f"{archive}: unsafe entry {quote(member.name)}")
        if not (member.isfile() or member.isdir()):
            raise ArchiveError(f"{archive}: {quote(member.name)} is not a plain file or folder")
        tops.add(path.parts[0])
    if len(tops) != 1:
        raise ArchiveError(f"{archive}: expected one top folder, found {sorted(tops) or 'none'}")
    return tops.pop()


@contextlib.contextmanager
def opened(path: Path) -> Iterator[Path]:
    """A release folder: `path` itself, or the archive `path` unpacked in a scratch folder."""
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.name.endswith(ARCHIVE_SUFFIX):
        raise ArchiveError(f"{path}: not a release folder or a {ARCHIVE_SUFFIX} archive")
    try:
        with (
            tarfile.open(path, "r:gz") as tar,
            tempfile.TemporaryDirectory(prefix="release-") as scratch,
        ):
            top = check_members(tar, path)
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4+; check_members already vetted it
                tar.extractall(scratch, filter="data")
            else:  # pragma: no cover
                tar.extractall(scratch)
            yield Path(scratch) / top
    except (tarfile.TarError, OSError, EOFError) as error:
        if isinstance(error, FileNotFoundError):
            raise ArchiveError(f"{path}: no such file") from None
        raise ArchiveError(f"{path}: not a readable tar.gz archive ({error})") from None
