"""Collaboration across writers and prompts (CoAuthor section 5.1.3, Figures 8 and 9): "both
collaboration equality and mutuality varied greatly depending on writers, but less on prompts".

Writers are shown as "writer 1", "writer 2", ... (ordered by how many sessions they wrote),
never by their worker id or access code: a report is shared more freely than the database. A
session that names no writer (a proactive export's sessions.csv carries no worker id) is in the
per-prompt figures only: taken as a writer of its own, the writers' spread would be the
sessions'.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from study.report import plots
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import finite

MOST_WRITERS = 30  # a plot with more bars than this is unreadable


def _means(groups: dict[str, list]) -> list[list]:
    rows = []
    for name, sessions in groups.items():
        equality = finite([s.stats.get("equality") for s in sessions])
        mutuality = finite([s.stats.get("mutuality") for s in sessions])
        rows.append([name, len(sessions), statistics.mean(equality) if equality else None,
                     statistics.mean(mutuality) if mutuality else None])  # fmt: skip
    return rows


def _spread(rows: list[list], column: int) -> float | None:
    values = [row[column] for row in rows if row[column] is not None]
    return statistics.pstdev(values) if len(values) > 1 else None


def build(data: ReportData) -> Section | None:
    if len(data.sessions) < 2:
        return None
    section = Section("variation", "Collaboration across writers and prompts (§5.1.3)")
    by_prompt: dict[str, list] = defaultdict(list)
    by_writer: dict[str, list] = defaultdict(list)
    for s in data.sessions:
        by_prompt[s.prompt_code].append(s)
        if s.writer:
            by_writer[s.writer].append(s)
    writers = sorted(by_writer.values(), key=lambda sessions: -len(sessions))
    labelled = {f"writer {i}": sessions for i, sessions in enumerate(writers, start=1)}
    prompt_rows = _means(dict(sorted(by_prompt.items())))
    writer_rows = _means(labelled)
    section.paragraph(
        "Mean equality and mutuality per writer and per prompt. The spread (standard deviation "
        "of the group means) says which varies more; the paper found writers vary more than "
        "prompts.",
        note=True,
    )
    unnamed = sum(1 for s in data.sessions if not s.writer)
    if unnamed:
        section.paragraph(f"{unnamed} of {len(data.sessions)} sessions name no writer (no worker "
                          "id in the data): they are in the per-prompt figures only.", note=True)  # fmt: skip
    section.table(
        ["grouped by", "groups", "spread of equality", "spread of mutuality"],
        [["writer", len(writer_rows), _spread(writer_rows, 2), _spread(writer_rows, 3)],
         ["prompt", len(prompt_rows), _spread(prompt_rows, 2), _spread(prompt_rows, 3)]],
    )  # fmt: skip
    for title, rows in (("prompt", prompt_rows), ("writer", writer_rows)):
        measured = [r for r in rows if r[2] is not None and r[3] is not None]
        shown = measured[:MOST_WRITERS] if title == "writer" else measured
        if not shown:
            continue
        section.figure(
            plots.grouped_bars([r[0] for r in shown],
                               {"equality": [r[2] for r in shown], "mutuality": [r[3] for r in shown]},
                               ylabel="mean score"),
            f"Equality and mutuality per {title}." + _left_out(title, len(rows), len(measured), len(shown)),
        )  # fmt: skip
    for title, rows in (("prompt", prompt_rows), ("writer", writer_rows)):
        if not rows:
            continue
        section.add(f"<details><summary>Per {title} (all {len(rows)})</summary>")
        section.table([title, "sessions", "equality", "mutuality"], rows)
        section.add("</details>")
    return section


def _left_out(title: str, groups: int, measured: int, shown: int) -> str:
    """What the plot does not show, in words: a plot never drops groups silently."""
    parts = []
    if shown < measured:
        parts.append(f"it shows the {shown} {title}s with most sessions of {groups}; "
                     f"the other {measured - shown} are in the per-{title} table below")  # fmt: skip
    if measured < groups:
        parts.append(f"{groups - measured} {title}(s) without both measures are left out")
    return (" Not all shown: " + "; ".join(parts) + ".") if parts else f" All {groups} {title}s."
