"""`SHA256SUMS`: one `<sha256>  <path>` line per file, sorted, as `sha256sum -c` reads it."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from study.curation.quote import quote
from study.release.layout import SUMS, release_files


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_sums(directory: Path) -> None:
    lines = [
        f"{sha256_file(directory / name)}  {name}\n"
        for name in release_files(directory)
        if name != SUMS
    ]
    (directory / SUMS).write_text("".join(lines), encoding="utf-8")


def read_sums(directory: Path) -> dict[str, str]:
    """path -> sha256 from SHA256SUMS. Raises ValueError naming the bad line."""
    sums: dict[str, str] = {}
    text = (directory / SUMS).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        digest, separator, name = line.partition("  ")
        path = PurePosixPath(name)
        if (
            not separator or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest)
            or path.is_absolute() or ".." in path.parts or not name
        ):  # fmt: skip
            raise ValueError(
                f"{SUMS} line {number}: expected '<64 hex digits>  <relative path>', "
                f"got {quote(line)}"
            )
        sums[name] = digest
    return sums


def check_sums(directory: Path) -> list[str]:
    """Problems: files whose hash differs, listed files missing, files not listed."""
    try:
        sums = read_sums(directory)
    except FileNotFoundError:
        return [f"{SUMS} is missing"]
    except ValueError as error:
        return [str(error)]
    problems = []
    present = set(release_files(directory)) - {SUMS}
    for name, digest in sorted(sums.items()):
        if name not in present:
            problems.append(f"{name}: listed in {SUMS} but missing")
        elif sha256_file(directory / name) != digest:
            problems.append(
                f"{name}: content differs from its {SUMS} checksum (changed after the build)"
            )
    for name in sorted(present - set(sums)):
        problems.append(f"{name}: not listed in {SUMS} (added after the build)")
    return problems
