"""A within-subjects study's design as it ran and its arms compared pair by pair
(`[design] assignment = "within"`; Dhillon et al. CHI 2024's Latin square, study.server.within).

The design: each arm list and Latin-square row participants began with, how many began it,
how many completed a session in every arm of it and how many are part-way (stopped, or not
back yet: the database cannot tell them apart). The paired figures: for each two arms of a
genre, each participant's own difference (later arm in study.toml order minus earlier) of the
report's per-session outcomes (study.report.sections.arms.outcomes), over the participants who
completed both, with the mean's 95% percentile bootstrap over participants (the writer is the
unit, so their own level cancels out). Then each outcome's mean by position in the order (first
session, second, ...): the practice or fatigue the Latin square balances across arms, which the
researcher should still see.

From a study folder (study.export.within_design) or a within-subjects release (its within.json,
study.release.within: the same figures for the same sessions, its participants being the
released ones); an export holds no arm lists or rows.
"""

from __future__ import annotations

from itertools import combinations

from study.report.data import RELEASE, ReportData
from study.report.html import Section
from study.report.intervals import RESAMPLES, bootstrap_mean, few_note
from study.report.sections.arms import not_asked, outcomes
from study.report.survey_answers import NOT_ASKED
from study.export.within_design import WithinDesign, order_of, row_label

RELEASED = (
    " From a release: its participants are the released ones (who withdrew, or none of whose "
    "sessions was released, are not counted), and part-way also counts those a session of whom "
    "was left out of it."
)


def build(data: ReportData) -> Section | None:
    design: WithinDesign | None = data.within
    if design is None or not design.participants:
        return None
    section = Section("within", "Within-subjects design")
    section.paragraph(
        "Arms were assigned within subjects: each participant writes once in every arm of the "
        "list they began with, in the order of their row of Williams' design over it (one "
        "Latin square for an even number of arms, two, each row and its mirror image, for an "
        "odd one; rows from 0; a row marked cyclic is of the cyclic square an odd number of "
        "arms took before). "
        "Part-way: participants without a completed session in every arm of their list, who "
        "stopped or have not come back yet."
        + (RELEASED if data.kind == RELEASE else ""),
        note=True,
    )
    rows = []
    for genre, arms, row, square, people in design.lists():
        complete = sum(1 for p in people if p.every_arm)
        rows.append([genre, ", ".join(arms), row_label(row, square),
                     " → ".join(order_of(arms, row, square)), len(people), complete, len(people) - complete])  # fmt: skip
    everyone = design.participants
    complete = sum(1 for p in everyone if p.every_arm)
    rows.append(["all", "", "", "", len(everyone), complete, len(everyone) - complete])
    section.table(["genre", "arm list", "row", "order", "began", "completed every arm", "part-way"], rows)
    measured = outcomes(data)
    if measured:
        _paired(section, design, measured, not_asked(data))
        _by_position(section, design, measured)
    return section


def _paired(section: Section, design: WithinDesign, measured, unasked: dict[str, set[str]]) -> None:
    rows = []
    for genre in sorted({p.genre for p in design.participants}):
        people = [p for p in design.participants if p.genre == genre]
        arms = [arm for arm in design.arms if any(arm in p.arms for p in people)]
        for earlier, later in combinations(arms, 2):
            both = [p for p in people if earlier in p.completed and later in p.completed]
            cells = []
            for heading, values in measured:
                if unasked.get(heading, set()) & {earlier, later}:
                    cells.append(NOT_ASKED)  # a survey one of the two arms did not ask
                    continue
                pairs = [(values.get(p.completed[later]), values.get(p.completed[earlier])) for p in both]
                cells.append(bootstrap_mean([b - a for b, a in pairs if _number(a) and _number(b)]))
            rows.append([f"{later} - {earlier}", len(both), *cells])
    if not rows:
        return
    section.add("<h3>Arms paired: each participant's own difference</h3>")
    section.paragraph(
        "For each two arms, the mean over participants who completed both of their own "
        f"difference, with its 95% percentile-bootstrap interval ({RESAMPLES} resamples of "
        "participants, fixed seed; none for fewer than 3).",
        note=True,
    )
    caveat = few_note((row[1] for row in rows), "participants")
    if caveat:
        section.paragraph(caveat, note=True)
    section.table(["arms", "participants with both", *(heading for heading, _ in measured)], rows)


def _by_position(section: Section, design: WithinDesign, measured) -> None:
    positions: dict[int, list[str]] = {}
    for person in design.participants:
        for session_id, position in person.position.items():
            positions.setdefault(position, []).append(session_id)
    if len(positions) < 2:
        return
    section.add("<h3>By position in the order</h3>")
    section.table(
        ["position", "sessions", *(heading for heading, _ in measured)],
        [[position, len(members), *(bootstrap_mean([values.get(s) for s in members]) for _, values in measured)]
         for position, members in sorted(positions.items())],
    )  # fmt: skip


def _number(value) -> bool:
    return value is not None and value == value  # not NaN
