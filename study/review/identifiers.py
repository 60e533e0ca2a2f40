"""The writer's own identifiers (worker, assignment and HIT ids, access code), found in text the
way the release's personal-data detector finds entities, and masked like the release masks them.

Reviewers must not learn who wrote a submission. A writer who types their worker id into the
story one key at a time never puts it whole into any single change of the log, so masking each
change on its own would miss it, and the animated replay would spell it out. The reviewers'
replay is therefore built from the log as `study.release.redaction` rewrites it: that redactor
replays the session, scans the document after every change, and masks each character of a
finding where it was typed. This module is the detector it asks. It finds only the session's
identifiers (a short regular expression, no Presidio), since reviewers are meant to read the
rest of the text as the writer wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from study.release.pii import Span, mask

ENTITY = "KNOWN_WORKER_ID"
MIN_LENGTH = 4  # shorter values (a lab's "P01") would match ordinary words


class IdentifierDetector:
    """Finds the given identifiers in any case; the interface of `study.release.pii.Detector`
    that `study.release.redaction` uses (`find`, `find_in`)."""

    def __init__(self, identifiers: Iterable[str | None]) -> None:
        self.known_ids = tuple(sorted({i for i in identifiers if i and len(i) >= MIN_LENGTH}))
        longest_first = sorted(self.known_ids, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(re.escape(i) for i in longest_first), re.IGNORECASE)
            if self.known_ids
            else None
        )
        self._reach = max((len(i) for i in self.known_ids), default=0)

    def find(self, text: str) -> tuple[Span, ...]:
        return tuple(self.find_in(text))

    def find_in(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """Identifiers that overlap or touch text[start:end]."""
        if self._pattern is None:
            return []
        end = len(text) if end is None else end
        low, high = max(0, start - self._reach), min(len(text), end + self._reach)
        return [
            Span(m.start(), m.end(), ENTITY, 1.0, "session identifiers")
            for m in self._pattern.finditer(text, low, high)
            if m.end() >= start and m.start() <= end
        ]

    def mask_text(self, text: str) -> str:
        """`text` with every identifier replaced by the release's same-length mask."""
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: mask(ENTITY, len(m.group())), text)
