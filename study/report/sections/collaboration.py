"""Acceptance, writer share, equality and mutuality per condition, with 95% intervals.

Conditions are the paper's four (genre x temperature, `study.report.conditions`) when every
session is in one of them, with the paper's equality beside each; a study's own otherwise.

Acceptance is the per-session `perc_selected` (suggestion-select / suggestion-open, the
release's definition; 0 for a session without a query), averaged over all sessions as Table 3
does (`study curate stats`); writer share is Table 3's "written by writers (%)" (the writer's share of the
final text, prompt excluded); equality and mutuality are section 5.1.3's scores over event
blocks (`study.curation.metrics`, the paper's printed sets). Intervals: `study.report.intervals`.
"""

from __future__ import annotations

from study.control_arm import COLLABORATION_SCORES, NOT_APPLICABLE
from study.report import plots
from study.report.conditions import by_paper_condition, label
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import RESAMPLES, bootstrap_mean, few_note

MEASURES = (
    ("acceptance (%)", "perc_selected", "Acceptance rate: suggestions accepted per list shown (%)."),
    ("written by writers (%)", "writer_share_final", "Writer's share of the final text (%)."),
    ("equality", "equality", "Equality (section 5.1.3): how evenly turns were shared, 0-1."),
    ("mutuality", "mutuality", "Mutuality (section 5.1.3): how much the writer interacted, 0-1."),
)

# §5.1.3 equality of the paper's four conditions (shared data README: computed over event blocks
# of the full release, hover events dropped).
PAPER_EQUALITY = {
    label("creative", "high"): 0.30, label("creative", "low"): 0.29,
    label("argumentative", "high"): 0.29, label("argumentative", "low"): 0.22,
}  # fmt: skip


# MindCopilot's acceptance is per writer, of the suggestions shown (study.paradigms.proactive:
# one_acceptance), so a ghost-text session shown none, or an L0 session (its assistant panel
# makes no suggestion), has none, where a Tab session without a query has 0.
UNMEASURED = ("{n} session(s) of a MindCopilot arm were shown no suggestion (L0's assistant "
              "panel makes none): MindCopilot's acceptance, of the suggestions shown, does not "
              "apply to them, so they are left out of the acceptance means, not counted as 0.")


# A chat arm's writer had an assistant but no Tab list (study.report.facts: `tab_list`).
NO_TAB_LIST = ("{n} session(s) of a chat arm (an assistant beside the editor, no Tab list) had "
               "no suggestion to query or accept: their queries and acceptance are not "
               "applicable, so they are left out of those means, not counted as 0 (their counts "
               "are empty in metadata.csv too).")


def not_applicable(sessions) -> int:
    """Sessions of a MindCopilot arm whose acceptance is not applicable (left empty)."""
    return sum(1 for s in sessions if s.assistant and s.tab_list and "perc_selected" in s.stats
               and s.stats["perc_selected"] is None)  # fmt: skip


def acceptance_notes(sessions) -> list[str]:
    """The notes of a section averaging acceptance over `sessions`: which sessions it leaves out."""
    notes = []
    if not_applicable(sessions):
        notes.append(UNMEASURED.format(n=not_applicable(sessions)))
    no_list = sum(1 for s in sessions if s.assistant and not s.tab_list)
    if no_list:
        notes.append(NO_TAB_LIST.format(n=no_list))
    return notes


def _values(sessions, column: str) -> list:
    if column == "perc_selected":
        # A control session had no list to accept from: its acceptance is not applicable, not
        # 0, in "all" as in its own row (Table 3 leaves it out likewise).
        sessions = [s for s in sessions if s.assistant]
    return [s.stats.get(column) for s in sessions]


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("collaboration", "Acceptance, writer share, equality and mutuality")
    section.paragraph(
        "Means per condition with 95% confidence intervals in brackets: the percentile "
        f"bootstrap over sessions ({RESAMPLES} resamples, fixed seed). No interval is given for "
        "fewer than 3 sessions. Acceptance counts a session without a query as 0, as the "
        "paper's Table 3 does. Acceptance, equality and mutuality are not applicable to a "
        "control arm (no assistant: no list to accept from, no turns to share), so its sessions "
        "are not in the \"all\" row of those three either.",
        note=True,
    )
    for note in acceptance_notes(data.sessions):
        section.paragraph(note, note=True)
    # The paper's four conditions (genre x temperature) when every session is in one of them;
    # otherwise the data's own (a study's condition names).
    groups = by_paper_condition(data.sessions)
    paper = groups is not None
    if groups is None:
        groups = {c: [s for s in data.sessions if s.condition == c] for c in data.conditions()}
    else:
        section.paragraph("Conditions are the paper's: genre x GPT-3's randomness, creative "
                          "temperature .75 / .3, argumentative .9 / .2; the last column is the "
                          "paper's equality for the condition.", note=True)  # fmt: skip
    groups["all"] = data.sessions
    estimates = {
        (name, column): bootstrap_mean(_values(members, column))
        for name, members in groups.items() for _, column, _ in MEASURES
    }  # fmt: skip
    caveat = few_note(e.n for e in estimates.values())
    if caveat:
        section.paragraph(caveat, note=True)
    for name, members in groups.items():
        if name != "all" and members and not any(s.tab_list for s in members):
            estimates[(name, "perc_selected")] = NOT_APPLICABLE  # a chat arm: no list to accept from
    for name in data.control_conditions():
        # No assistant, so no list to accept from: "not applicable", where 0 would read as refusal;
        # and no turns or interaction with one (study.control_arm.COLLABORATION_SCORES).
        for column in ("perc_selected", *COLLABORATION_SCORES):
            estimates[(name, column)] = NOT_APPLICABLE
    section.table(
        ["condition", "sessions", *(heading for heading, _, _ in MEASURES),
         *(["paper equality"] if paper else [])],
        [[name, len(members), *(estimates[(name, column)] for _, column, _ in MEASURES),
          *([PAPER_EQUALITY.get(name)] if paper else [])]
         for name, members in groups.items()],
    )  # fmt: skip
    for heading, column, caption in MEASURES:
        rows = [(name, estimates[(name, column)]) for name in groups
                if estimates[(name, column)] != NOT_APPLICABLE]
        if any(e.n for _, e in rows):
            section.figure(plots.intervals(rows, xlabel=heading), caption + " Mean and 95% CI.")
    return section
