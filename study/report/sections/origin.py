"""Where the text came from, per condition (arm): typed, from the study's assistant, or from
outside the study (issue 27 item 6; `study.curation.origin` defines the three).

Beside the paper's writer share (the collaboration section, which counts outside text as the
writer's so Table 3 still reproduces), each source's share of the final text with its 95%
bootstrap interval, and how many sessions took in text from outside: an auditor reads here
whether an arm's "human" text is the writers' own. The flagged sessions are listed by id, to
drop or keep (`study curate stats` gives the same columns per session).
"""

from __future__ import annotations

from study.curation.origin import MIN_CHARS
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import RESAMPLES, bootstrap_mean

SOURCES = (("typed (%)", "typed_share"), ("assistant (%)", "assistant_share"),
           ("outside (%)", "outside_share"))  # fmt: skip
LISTED = 50  # flagged session ids shown; the rest are counted


def build(data: ReportData) -> Section | None:
    sessions = [s for s in data.sessions if "outside_share" in s.stats]
    if not sessions:
        return None
    section = Section("origin", "Where the text came from")
    section.paragraph(
        "Each source's share of the final text (prompt excluded), mean per condition with 95% "
        f"bootstrap intervals ({RESAMPLES} resamples). Typed: keystrokes, and the writer's own "
        "text copied within the session. Assistant: accepted suggestions. Outside: an insert "
        f"of {MIN_CHARS} or more characters at once of text the session never held (a paste from "
        "elsewhere). The writer share of the collaboration section keeps CoAuthor's definition, "
        "in which outside text counts as the writer's.",
        note=True,
    )
    rows = []
    for condition in sorted({s.condition for s in sessions}) + ["all"]:
        group = [s for s in sessions if condition in ("all", s.condition)]
        flagged = sum(1 for s in group if s.stats.get("outside_inserts"))
        rows.append([condition, len(group),
                     *(bootstrap_mean([s.stats.get(column) for s in group]) for _, column in SOURCES),
                     flagged])  # fmt: skip
    section.table(["condition", "sessions", *(h for h, _ in SOURCES), "sessions with outside text"], rows)
    flagged = sorted(s.session_id for s in sessions if s.stats.get("outside_inserts"))
    if flagged:
        shown = ", ".join(flagged[:LISTED]) + (f" and {len(flagged) - LISTED} more" if len(flagged) > LISTED else "")
        section.paragraph(f"Sessions with text from outside: {shown}.")
    return section
