"""Sections for per-session metrics that other parts of the toolkit compute: the chat study
(CollabLLM: turns, tokens, interactivity) and proactive co-writing (MindCopilot L0-L3:
acceptance per level, edits). The report knows nothing about how they are computed.

A producer registers a loader in `study.report.data.EXTRA_LOADERS`; the loader puts, under its
key in `data.extras`:

    {"title": "...", "note": "how the metrics are defined",
     "sessions": {session_id: {"metric name": number, ...}, ...}}

and the section shows each metric's mean per condition with its 95% bootstrap interval, like
the collaboration section. No entry, no section.
"""

from __future__ import annotations

from collections.abc import Callable

from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import bootstrap_mean


def metrics_section(key: str, title: str) -> Callable[[ReportData], Section | None]:
    def build(data: ReportData) -> Section | None:
        entry = data.extras.get(key)
        if not entry or not entry.get("sessions"):
            return None
        section = Section(key, entry.get("title") or title)
        if entry.get("note"):
            section.paragraph(entry["note"], note=True)
        means_table(section, entry["sessions"], data.condition_of())
        return section

    return build


def means_table(section: Section, per_session: dict[str, dict], condition_of: dict[str, str],
                metrics: list[str] | None = None) -> None:
    """Each metric's mean per condition (and over all sessions) with its 95% bootstrap
    interval; `metrics` in the order given, by default every metric sorted by name."""
    metrics = metrics or sorted({name for values in per_session.values() for name in values})
    groups: dict[str, list[str]] = {}
    for session_id in per_session:
        groups.setdefault(condition_of.get(session_id, "unknown"), []).append(session_id)
    groups = dict(sorted(groups.items()))
    groups["all"] = list(per_session)
    section.table(
        ["condition", "sessions", *metrics],
        [[name, len(ids), *(bootstrap_mean([per_session[i].get(m) for i in ids]) for m in metrics)]
         for name, ids in groups.items()],
    )  # fmt: skip
