"""What the report was made from, and how many sessions it covers."""

from __future__ import annotations

from collections import Counter
from functools import partial

from study.report.data import RELEASE, STUDY, ReportData
from study.report.html import Section
from study.report.shown_paths import shown

KINDS = {
    STUDY: "a study folder (its database and its sessions exported as `study export` writes them)",
    RELEASE: "a release: it holds finished sessions only, so there is no participation funnel "
    "or stage timing",
    "folder": "a folder of exported sessions: it holds finished sessions only, so there is no "
    "participation funnel or stage timing",
}


def build(data: ReportData) -> Section:
    section = Section("overview", "Overview")
    # Shared or published, the report must not say where the data lay on this disk.
    where = partial(shown, report_folder=data.report_folder)
    section.paragraph(f"Source: {where(data.path)} — {KINDS[data.kind]}.")
    if data.metadata_files is not None:
        section.paragraph(f"Read {data.metadata_files.describe(where)}.")
    elif data.metadata:
        section.paragraph(f"Read {data.metadata}.")
    genres = Counter(s.genre for s in data.sessions)
    # None ("–"), not 0, when the data names no writer (a proactive export has no worker ids).
    writers = len({s.writer for s in data.sessions if s.writer}) or None
    section.table(
        ["", "sessions"],
        [["sessions with a log", len(data.sessions)], ["writers", writers]]
        + [[f"genre: {genre}", n] for genre, n in sorted(genres.items())]
        + [["simulated sessions (study simulate)", data.simulated]]
        + ([["chat conversations (no CoAuthor log)", len(data.unlogged)]] if data.unlogged else []),
    )
    if data.unreadable:
        section.paragraph(
            f"{len(data.unreadable)} session file(s) could not be read and are left out, e.g. "
            f"{data.unreadable[0]}. `study curate validate` names the problem.",
            note=True,
        )
    return section
