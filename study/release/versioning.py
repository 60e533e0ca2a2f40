"""Semantic versions of a dataset, and what each kind of change requires.

A release is MAJOR.MINOR.PATCH. Compared with the previous release of the same name:

- **MAJOR** when a user's code or analysis can break: a file or a column removed or renamed,
  the record format or the release layout changed, sessions removed for any reason other than
  a participant's withdrawal, or pseudonyms re-keyed (another key or namespace: the same writer
  gets a new pseudonym, so writers can no longer be followed across releases).
- **MINOR** when data is added compatibly: new sessions, new columns or files.
- **PATCH** for corrections that keep the structure: redaction fixes, corrected metadata or
  documentation, and sessions removed because their writer withdrew (consent obliges us to
  remove them; nothing else changes).

`study release build` computes the smallest bump the changes need (`required_bump`) and refuses
a version below it, or one not above every existing release of that name. The first release
may have any version (1.0.0 by convention).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAJOR, MINOR, PATCH = "major", "minor", "patch"
_ORDER = {PATCH: 0, MINOR: 1, MAJOR: 2}
_VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _VERSION.match(text.strip())
        if not match:
            raise ValueError(f"{text!r} is not a version MAJOR.MINOR.PATCH such as 1.0.0")
        return cls(*(int(part) for part in match.groups()))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def bump_from(self, previous: "Version") -> str | None:
        """Which part this version bumps relative to `previous` (None if not greater)."""
        if self <= previous:
            return None
        if self.major != previous.major:
            return MAJOR
        if self.minor != previous.minor:
            return MINOR
        return PATCH

    def bumped(self, part: str) -> "Version":
        if part == MAJOR:
            return Version(self.major + 1, 0, 0)
        if part == MINOR:
            return Version(self.major, self.minor + 1, 0)
        return Version(self.major, self.minor, self.patch + 1)


@dataclass(frozen=True)
class Reason:
    bump: str
    why: str


def required_bump(reasons: list[Reason]) -> str:
    return max((r.bump for r in reasons), key=_ORDER.__getitem__, default=PATCH)


def check_version(version: Version, previous: Version, reasons: list[Reason]) -> str | None:
    """An error message when `version` is too small a step from `previous`, else None."""
    bump = version.bump_from(previous)
    need = required_bump(reasons)
    if bump is None:
        return f"version {version} must be greater than the previous release {previous}"
    if _ORDER[bump] < _ORDER[need]:
        why = "; ".join(r.why for r in reasons if r.bump == need)
        return (
            f"version {version} is a {bump} release, but {why}: that needs a {need} release "
            f"({previous.bumped(need)} or later). See the versioning rules in the README."
        )
    return None
