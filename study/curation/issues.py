"""What validation reports: every kind of issue with its severity and fix, and the report of
one session file (see study.curation.validate for the checks that raise them)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from study.curation.formats import ENCODING_FIXES, RELEASE_KEYS

ERROR, WARNING = "error", "warning"
MAX_PER_CODE = 10  # issues kept per code and file by default; all are counted

RESTORE = "restore the original log: lines are lost or out of order"
NONE = "none needed"
# Every issue: code -> (severity, how to fix it).
ISSUES = {
    # the file
    "crash": (ERROR, "the checker itself failed on this file: report it with the file (every "
              "other file was checked)"),
    "json": (ERROR, "repair or remove the line"),
    "bom": (ERROR, ENCODING_FIXES["bom"]),
    "encoding": (ERROR, ENCODING_FIXES["encoding"]),
    "not-object": (ERROR, "each line must be one event object"),
    "empty": (ERROR, "remove the file or restore its lines"),
    "format": (ERROR, "write one of the formats of schemas/coauthor-*.schema.json"),
    "blank-line": (WARNING, "delete the line"),
    "schema": (ERROR, "make the record match its schema"),  # the schema file is named per issue
    "key-order": (WARNING, "write the keys in this order: " + ", ".join(RELEASE_KEYS)),
    # the session's start and numbering
    "first-event": (ERROR, f"put the session's system-initialize line first; {RESTORE}"),
    "second-initialize": (ERROR, "split the file: one session per file, each starting with it"),
    "prompt": (WARNING, f"{NONE} for a blank-start session; otherwise restore the prompt text"),
    "later-current-doc": (WARNING, 'set it to "": replay uses the first event\'s prompt'),
    "event-num": (ERROR, "renumber eventNum 0..n-1 in line order, or restore the line order"),
    "timestamp-order": (WARNING, f"{NONE}: real logs do this; the line order is the event order"),
    "event-source": (WARNING, f"{NONE} if the logging interface differs; else check the source"),
    "controls-changed": (WARNING, f"{NONE} if intended; a session normally keeps one setting"),
    # the text
    "delta": (ERROR, f"{RESTORE}; later deltas are not checked"),
    "text-without-delta": (ERROR, f"a text event must carry the delta it applied; {RESTORE}"),
    "delta-on-non-text-event": (ERROR, 'set textDelta to "" or eventName to the text event'),
    "cursor-mismatch": (WARNING, f"{NONE}: replay and metrics do not use the cursor"),
    "embed": (WARNING, f"{NONE}: Quill and replay count it as one character; look at a pasted "
              "image before a release (the text scan cannot see it)"),
    # suggestions
    "unanswered-query": (WARNING, f"{NONE}: writers press tab again or type on"),
    "empty-suggestions": (WARNING, f"{NONE}; check the suggestion engine"),
    "selection-without-list": (ERROR, f"the suggestion-open showing it is missing; {RESTORE}"),
    "suggestion-mismatch": (ERROR, f"the matching suggestion-open is missing; {RESTORE}"),
    "suggestion-partial": (WARNING, f"{NONE}: MindCopilot's partial accept, which CoAuthor's "
                           "vocabulary has no event for (the extended export marks it `partial`)"),
    "suggestion-loose-match": (WARNING, f"{NONE}: the editor normalised spaces or newlines"),
    "selection-not-inserted": (WARNING, f"{NONE} if cancelled; else the text-insert is missing"),
    # Proactive sessions (MindCopilot L1-L3, study.paradigms.proactive.curation.checks)
    "proactive-unknown-suggestion": (ERROR, f"the suggestion-open with that suggestionId is missing; {RESTORE}"),
    "proactive-forged": (ERROR, "this server did not issue it (study.paradigms.proactive.curation.provenance): "
                         "exclude the session, or restore the original log"),
    "proactive-span": (WARNING, f"{NONE} if the editor lost track; metrics use the replayed span"),
}  # fmt: skip

@dataclass
class Issue:
    severity: str
    code: str
    line: int | None
    field: str | None
    message: str
    fix: str
    file: str = ""

    def render(self) -> str:
        """`sessions/ab12.jsonl line 40: textDelta ops[1].retain must be ...` and the fix."""
        where = f"{self.file} line {self.line}" if self.line else self.file
        subject = f"{self.field} " if self.field else ""
        return f"{where}: {subject}{self.message}\n    fix: {self.fix}"

    def to_dict(self) -> dict:
        return {
            "severity": self.severity, "code": self.code, "file": self.file, "line": self.line,
            "field": self.field, "message": self.message, "fix": self.fix,
        }  # fmt: skip


@dataclass
class SessionReport:
    """What validation found in one session file."""

    file: str
    session_id: str
    format: str | None = None
    events: int = 0
    issues: list[Issue] = field(default_factory=list)  # at most `keep` per code
    counts: Counter = field(default_factory=Counter)  # (severity, code) -> every occurrence
    keep: int | None = MAX_PER_CODE  # issues worded and kept per code (None: all)

    def add(self, code: str, line: int | None, field_name: str | None, message: str, fix: str = "") -> None:
        """Count an issue of `code` (ISSUES), and word and keep it while under `keep`."""
        severity, default_fix = ISSUES[code]
        key = (severity, code)
        self.counts[key] += 1
        if self.keep is None or self.counts[key] <= self.keep:
            self.issues.append(Issue(severity, code, line, field_name, message, fix or default_fix, self.file))

    @property
    def errors(self) -> int:
        return sum(n for (severity, _), n in self.counts.items() if severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(n for (severity, _), n in self.counts.items() if severity == WARNING)

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def to_dict(self) -> dict:
        counts = {f"{severity}:{code}": n for (severity, code), n in sorted(self.counts.items())}
        return {
            "file": self.file, "session_id": self.session_id, "format": self.format,
            "events": self.events, "errors": self.errors, "warnings": self.warnings,
            "counts": counts, "issues": [issue.to_dict() for issue in self.issues],
        }  # fmt: skip
