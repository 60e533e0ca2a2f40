"""The report's HTML: one self-contained page (its CSS inline, plots as inline SVG, no script)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from study.report.intervals import Estimate

CSS = """
body { font: 15px/1.5 system-ui, sans-serif; color: #222; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .8rem 0; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #e2e2e2; padding: .25rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.note { color: #555; font-size: .92rem; }
.banner { background: #fff3cd; border: 1px solid #e0c36a; padding: .6rem .9rem; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
nav ol { columns: 2; }
"""


@dataclass
class Section:
    """One part of the report: an id (its anchor), a title, and its HTML body."""

    id: str
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, html: str) -> Section:
        self.parts.append(html)
        return self

    def paragraph(self, text: str, *, note: bool = False) -> Section:
        return self.add(f'<p{" class=note" if note else ""}>{escape(text)}</p>')

    def figure(self, svg: str, caption: str) -> Section:
        return self.add(
            f'<figure data-plot="{escape(self.id)}">{svg}'
            f"<figcaption class=note>{escape(caption)}</figcaption></figure>"
        )

    def table(self, headings: Sequence[str], rows: Sequence[Sequence[object]], *,
              digits: int = 2) -> Section:
        return self.add(table(headings, rows, digits))


def cell(value: object, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, Estimate):
        if value.n == 0:
            return "–"
        if not value.has_interval:
            return f"{value.mean:.{digits}f}"
        return f"{value.mean:.{digits}f} [{value.low:.{digits}f}, {value.high:.{digits}f}]"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def table(headings: Sequence[str], rows: Sequence[Sequence[object]], digits: int = 2) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell(v, digits))}</td>" for v in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, intro: Sequence[str], sections: Sequence[Section], banner: str = "") -> str:
    nav = "".join(f'<li><a href="#{escape(s.id)}">{escape(s.title)}</a></li>' for s in sections)
    body = "".join(
        f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>{"".join(s.parts)}</section>'
        for s in sections
    )
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        + (f'<p class=banner data-simulated>{escape(banner)}</p>' if banner else "")
        + "".join(f"<p>{escape(line)}</p>" for line in intro)
        + f"<nav><ol>{nav}</ol></nav>{body}</body></html>\n"
    )
