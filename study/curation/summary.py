"""What `study curate validate` says about a whole corpus: a count per issue code, and the
first few issues of each code as examples.

On the public release validate finds thousands of warnings (2,454 lines when each was
printed): a curator needs to know which kinds occur, how often and in how many sessions, with
a few instances of each to look at, and the full list only on request (`--verbose`, or
`--format json` for machines). `ValidationSummary` takes the session reports as they stream
in (memory: one counter per code and a few examples, whatever the corpus size).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from study.curation.issues import ERROR, ISSUES, Issue, SessionReport

EXAMPLES = 3  # issues shown per code by default


class ValidationSummary:
    def __init__(self, examples: int = EXAMPLES) -> None:
        self.examples_per_code = examples
        self.sessions = self.events = self.with_errors = self.with_warnings = 0
        self.occurrences: Counter = Counter()  # (severity, code) -> every occurrence
        self.sessions_with: Counter = Counter()  # (severity, code) -> sessions
        self.examples: dict[tuple[str, str], list[Issue]] = defaultdict(list)

    def add(self, report: SessionReport) -> None:
        self.sessions += 1
        self.events += report.events
        self.with_errors += not report.ok
        self.with_warnings += report.warnings > 0
        self.occurrences.update(report.counts)
        self.sessions_with.update(report.counts.keys())
        for issue in sorted(report.issues, key=lambda i: i.line or 0):
            kept = self.examples[(issue.severity, issue.code)]
            if len(kept) < self.examples_per_code:
                kept.append(issue)

    @property
    def valid(self) -> int:
        return self.sessions - self.with_errors

    def codes(self) -> list[tuple[str, str]]:
        """(severity, code) that occurred: errors first, then the most frequent."""
        return sorted(self.occurrences, key=lambda key: (key[0] != ERROR, -self.occurrences[key]))

    def table(self) -> list[dict]:
        return [
            {"severity": severity, "code": code, "sessions": self.sessions_with[(severity, code)],
             "occurrences": self.occurrences[(severity, code)]}
            for severity, code in self.codes()
        ]  # fmt: skip

    def headline(self) -> str:
        plural = "" if self.sessions == 1 else "s"
        return (
            f"Checked {self.sessions:,} session{plural} ({self.events:,} events): "
            f"{self.valid:,} valid, {self.with_errors:,} with errors, "
            f"{self.with_warnings:,} with warnings."
        )

    def render_examples(self, show_warnings: bool = True) -> str:
        """The first few issues of each code, with the code's count and fix."""
        blocks = []
        for severity, code in self.codes():
            if severity != ERROR and not show_warnings:
                continue
            n, sessions = self.occurrences[(severity, code)], self.sessions_with[(severity, code)]
            shown = self.examples[(severity, code)]
            first = f", the first {len(shown)}" if len(shown) < n else ""
            lines = [
                f"{severity} {code}: {n:,} in {sessions:,} session"
                f"{'' if sessions == 1 else 's'}{first}"
            ]
            for issue in shown:
                where = f"{issue.file} line {issue.line}" if issue.line else issue.file
                subject = f"{issue.field} " if issue.field else ""
                lines.append(f"  {where}: {subject}{issue.message}")
            lines.append(f"  fix: {shown[0].fix if shown else ISSUES[code][1]}")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def to_dict(self) -> dict:
        return {
            "sessions": self.sessions, "events": self.events, "valid": self.valid,
            "with_errors": self.with_errors, "with_warnings": self.with_warnings,
            "issues": self.table(),
        }  # fmt: skip
