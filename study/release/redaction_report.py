"""The curator's redaction report (study.release.build): every redaction with its original
text, for review before publication. It holds the original text and the study's session ids,
so it is written private, beside the key, never into the release.

Each line is a `Redaction`, as the redactors (study.release.redaction, .redaction_texts,
.conversations, and .redact_source for the survey answers) record what they replaced: where,
the entity, the original and its mask, and the recognizer that found it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from study.release.pii import Span
from study.spreadsheet import spreadsheet_text
from study.store.permissions import private_folder, write_private

REPORT_COLUMNS = ("session_id", "study_session_id", "where", "entity", "original", "replacement", "score", "recognizer")


@dataclass(frozen=True)
class Redaction:
    """One thing the redactor replaced, for the curator's review (never part of a release)."""

    session_id: str
    where: str
    entity: str
    original: str
    replacement: str
    score: float
    recognizer: str


def span_redactions(session_id: str, where: str, value: str, redacted: str, spans: list[Span]) -> list[Redaction]:
    """One Redaction per entity the detector found in the text `value`, `redacted` its masked form."""
    return [
        Redaction(session_id, where, s.entity, value[s.start : s.end], redacted[s.start : s.end], s.score, s.recognizer)
        for s in spans
    ]


def place(redaction: Redaction) -> str:
    if redaction.where.startswith("conversation"):  # study.release.conversations.WHERE
        return "conversations"
    if redaction.where.startswith("survey"):
        return "survey answers"
    if "Suggestions" in redaction.where:
        return "suggestion lists"
    return "session text"


def write(path: Path, redactions: list[Redaction], released: dict[str, str]) -> None:
    """The curator's review list. It holds the original text (and the study's session ids), so
    it is private (mode 600). The curator reads it in a spreadsheet and no command reads it back,
    so a found phone number "+1 617 ..." or a text "=..." is written as text there
    (study.spreadsheet)."""
    private_folder(path.parent)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(REPORT_COLUMNS)
    for r in redactions:
        cells = [released.get(r.session_id, ""), r.session_id, r.where, r.entity, r.original, r.replacement, r.score, r.recognizer]
        writer.writerow([spreadsheet_text(cell) for cell in cells])
    write_private(path, buffer.getvalue().encode("utf-8"))
