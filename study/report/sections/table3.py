"""CoAuthor's Table 3 for the sessions of the report, beside the paper's (study.report.table3)."""

from __future__ import annotations

from study.report.data import ReportData
from study.report.html import Section
from study.report.sections.collaboration import acceptance_notes
from study.report.table3 import COLUMNS, table3, with_paper


def build(data: ReportData) -> Section | None:
    # The paper's table is over sessions with an assistant; a control arm's would add
    # sessions without queries to its query and acceptance averages.
    sessions = [s for s in data.sessions if s.assistant]
    if not sessions:
        return None
    metadata = {
        s.session_id: {"genre": s.genre, "prompt_code": s.prompt_code, "worker_id": s.writer}
        for s in sessions
    }
    rows = with_paper(table3([s.stats for s in sessions], metadata))
    section = Section("table3", "CoAuthor Table 3: overall statistics")
    section.paragraph(
        "The paper's rows are over the full CoAuthor release (1,445 sessions, GPT-3). Readings: "
        "time is the span of a log's events, length the words of the final text without the "
        "prompt, queries the lists shown, acceptance the mean of per-session rates with a "
        "session without a query counting 0 (the paper's definition: the release's "
        "perc_selected), written by writers the writer's share of the final text. The last "
        "column is not the paper's: acceptance over sessions with at least one query. The "
        "paper's writers (58 / 49) and length (446 / 380 / 418, its caption says 366) are not "
        "what the release's metadata and texts give (57 / 47 worker ids; about 367 words): see "
        "the README.",
        note=True,
    )
    if len(sessions) < len(data.sessions):
        section.paragraph(f"{len(data.sessions) - len(sessions)} session(s) of a control arm (no "
                          "assistant) are not in this table.", note=True)  # fmt: skip
    for note in acceptance_notes(sessions):
        section.paragraph(note, note=True)
    section.table(["genre", "source", *COLUMNS],
                  [[r["genre"], r["source"], *(r[c] if r[c] != "" else None for c in COLUMNS)]
                   for r in rows], digits=1)  # fmt: skip
    return section
