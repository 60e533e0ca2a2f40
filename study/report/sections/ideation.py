"""Ideation (CoAuthor section 5.1.2, Figure 7): new named entities in accepted suggestions,
and how often writers reused them (`study.report.entities`)."""

from __future__ import annotations

from study.report.data import ReportData
from study.report.html import Section

PAPER = "The paper: 13% (creative) and 7% (argumentative) of accepted suggestions had new named " \
        "entities; 20% and 14% of those were reused."


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("ideation", "Ideation: new named entities (§5.1.2)")
    if data.entity_model.nlp is None:
        section.paragraph(f"Not computed: {data.entity_model.why_not}", note=True)
        section.paragraph(PAPER, note=True)
        return section
    section.paragraph(
        f"Named entities by the spaCy pipeline {data.entity_model.name} (the paper used Stanza). "
        "An entity is new when the text before the accepted suggestion does not contain it, and "
        "reused when the writer typed it later (exact match).",
        note=True,
    )
    rows = []
    for name in [*data.conditions(), "all"]:
        members = [s for s in data.sessions if name in ("all", s.condition) and s.entities]
        accepted = sum(s.entities.accepted for s in members)
        with_new = sum(s.entities.with_new for s in members)
        new = sum(s.entities.new for s in members)
        reused = sum(s.entities.reused for s in members)
        rows.append([name, accepted, with_new,
                     f"{100 * with_new / accepted:.0f}%" if accepted else "–",
                     new, reused, f"{100 * reused / new:.0f}%" if new else "–"])  # fmt: skip
    section.table(["condition", "accepted suggestions", "with new entities", "share",
                   "new entities", "reused by writer", "reuse rate"], rows)  # fmt: skip
    section.paragraph(PAPER, note=True)
    return section
