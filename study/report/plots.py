"""Plots as inline SVG (matplotlib, no JavaScript, nothing fetched): the report stays one file.

Text is kept as SVG text (`svg.fonttype = none`), which keeps the file small and the labels
searchable; the browser draws it with its own sans-serif font.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # no display: the report is written by a command, often on a server

import matplotlib.pyplot as plt  # noqa: E402

from study.report.intervals import Estimate  # noqa: E402

COLOR = "#3b6ea8"
SECOND = "#d08c2f"
STYLE = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
         "axes.spines.right": False, "svg.hashsalt": "study-report"}  # fmt: skip


def to_svg(figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    svg = buffer.getvalue()
    # Inline SVG needs neither the XML declaration, the DOCTYPE nor the RDF metadata block.
    svg = svg[svg.index("<svg") :]
    return re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)


def bars(labels: Sequence[str], values: Sequence[float], *, xlabel: str = "",
         horizontal: bool = True, annotate: bool = True) -> str:
    """Horizontal bars (first label on top), each with its value written beside it."""
    with plt.rc_context(STYLE):
        height = max(1.4, 0.35 * len(labels) + 0.6)
        figure, axes = plt.subplots(figsize=(6.4, height) if horizontal else (6.4, 3.2))
        if horizontal:
            positions = list(range(len(labels)))[::-1]
            axes.barh(positions, values, color=COLOR)
            axes.set_yticks(positions, labels)
            axes.set_xlabel(xlabel)
            if annotate:
                for y, value in zip(positions, values, strict=True):
                    axes.text(value, y, f" {value:g}", va="center")
        else:
            axes.bar(range(len(labels)), values, color=COLOR)
            axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
            axes.set_ylabel(xlabel)
        return to_svg(figure)


def boxes(groups: dict[str, Sequence[float]], *, ylabel: str) -> str:
    """One box (median, quartiles, whiskers at 1.5 IQR) per group, with the points overlaid."""
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(6.4, 3.0))
        names = [name for name, values in groups.items() if values]
        data = [list(groups[name]) for name in names]
        if data:
            axes.boxplot(data, showfliers=False)
            for position, values in enumerate(data, start=1):
                spread = [position + 0.08 * math.sin(i * 2.4) for i in range(len(values))]
                axes.plot(spread, values, "o", color=COLOR, alpha=0.5, markersize=3)
            axes.set_xticks(range(1, len(names) + 1), names, rotation=20, ha="right")
        axes.set_ylabel(ylabel)
        return to_svg(figure)


def intervals(rows: Sequence[tuple[str, Estimate]], *, xlabel: str) -> str:
    """Means as points with their 95% intervals as bars, one row per group."""
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(6.4, max(1.4, 0.4 * len(rows) + 0.6)))
        positions = list(range(len(rows)))[::-1]
        for y, (_, estimate) in zip(positions, rows, strict=True):
            if estimate.has_interval:
                axes.plot([estimate.low, estimate.high], [y, y], color=COLOR, linewidth=2)
            axes.plot([estimate.mean], [y], "o", color=SECOND)
        axes.set_yticks(positions, [f"{name} (n={e.n})" for name, e in rows])
        axes.set_xlabel(xlabel)
        axes.set_ylim(-0.6, len(rows) - 0.4)
        return to_svg(figure)


def grouped_bars(categories: Sequence[str], series: dict[str, Sequence[float]], *,
                 ylabel: str) -> str:
    """Bars per category, one colour per series (e.g. answers per point, by condition)."""
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(6.4, 2.8))
        width = 0.8 / max(1, len(series))
        for k, (name, values) in enumerate(series.items()):
            axes.bar([i + k * width for i in range(len(categories))], values, width, label=name)
        rotate = len(categories) > 8 or max((len(c) for c in categories), default=0) > 6
        axes.set_xticks([i + 0.4 - width / 2 for i in range(len(categories))], categories,
                        rotation=45 if rotate else 0, ha="right" if rotate else "center")
        axes.set_ylabel(ylabel)
        if len(series) > 1:
            axes.legend(frameon=False, fontsize=8)
        return to_svg(figure)


def lines(series: dict[str, Sequence[tuple[float, float]]], *, xlabel: str, ylabel: str) -> str:
    """One line with markers per series, through its (x, y) points (e.g. the mean rating at
    each rating point, per condition)."""
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(6.4, 3.0))
        for name, points in series.items():
            points = sorted(points)
            axes.plot([x for x, _ in points], [y for _, y in points], "o-", label=name)
        xs = sorted({x for points in series.values() for x, _ in points})
        axes.set_xticks(xs, [f"{x:g}" for x in xs])
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        if len(series) > 1:
            axes.legend(frameon=False, fontsize=8)
        return to_svg(figure)
