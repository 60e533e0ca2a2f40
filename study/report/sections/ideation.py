"""Ideation (CoAuthor section 5.1.2, Figure 7): new named entities in accepted suggestions,
and how often writers reused them (`study.report.entities`), per genre and per genre x
randomness beside the paper's figures."""

from __future__ import annotations

from study.report.conditions import by_genre_and_condition, label
from study.report.data import ReportData
from study.report.html import Section

# §5.1.2: accepted suggestions with new entities, and new entities reused, in % (the paper's
# ± is its standard error; it gives no overall figure).
PAPER = {
    "creative": (13, 20), label("creative", "high"): (15, 19), label("creative", "low"): (10, 22),
    "argumentative": (7, 14), label("argumentative", "high"): (9, 13),
    label("argumentative", "low"): (6, 15),
}  # fmt: skip
HEADINGS = ["group", "sessions", "accepted suggestions", "with new entities", "share (%)",
            "paper share (%)", "new entities", "reused by the writer", "reuse (%)",
            "in any later text", "reuse, any later text (%)", "paper reuse (%)"]  # fmt: skip


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("ideation", "Ideation: new named entities (§5.1.2, Fig. 7)")
    model = data.entity_model
    if model.nlp is None:
        section.paragraph(f"Not computed: {model.why_not}", note=True)
        section.paragraph("The paper: 13% (creative) and 7% (argumentative) of accepted "
                          "suggestions had new named entities; 20% and 14% of those were "
                          "reused.", note=True)  # fmt: skip
        return section
    section.paragraph(
        f"Named entities by the spaCy pipeline {model.name} {model.version} (its ner component "
        "alone); the paper used Stanza, whose entity spans and types differ, so the shares are "
        "comparable in size, not to the digit. An entity of an accepted suggestion is new when "
        "the text before the suggestion does not contain it. Reused by the writer: the writer "
        "typed it again later (exact match), the paper's wording and this report's reading; "
        "in any later text: it appears in anything inserted later, the writer's text or a "
        "later accepted suggestion, the reading whose size is nearer the paper's figures (see "
        "the README). Shares pool suggestions and entities over sessions, as the paper's "
        "percentages do.",
        note=True,
    )
    groups = by_genre_and_condition(data.sessions)
    if groups is None:  # conditions of the study's own: no paper figures to compare
        groups = {c: [s for s in data.sessions if s.condition == c] for c in data.conditions()}
    groups["all"] = data.sessions
    rows = [_row(name, members) for name, members in groups.items()]
    section.table(HEADINGS, rows)
    return section


def _row(name: str, members: list) -> list:
    counted = [s.entities for s in members if s.entities]
    accepted = sum(e.accepted for e in counted)
    with_new = sum(e.with_new for e in counted)
    new = sum(e.new for e in counted)
    reused = sum(e.reused for e in counted)
    anyone = sum(e.reused_anyone for e in counted)
    share, reuse = PAPER.get(name, (None, None))
    return [name, len(members), accepted, with_new, _percent(with_new, accepted), share,
            new, reused, _percent(reused, new), anyone, _percent(anyone, new), reuse]  # fmt: skip


def _percent(part: int, whole: int) -> str | None:
    return f"{100 * part / whole:.0f}" if whole else None
