"""The arms of a study compared (issue 27 item 2): each outcome per arm with its 95% bootstrap
interval, and each arm's difference from the control arm with its interval.

Outcomes: writing time and final length (Table 3's), the writer share (Table 3's, CoAuthor's
definition), the typed and outside shares (`study.curation.origin`), and every scale question
of the surveys (an arm a survey does not ask, `arms`, reads "not asked" there, and so does
a difference from or to it). An arm is a condition. The control is the arm without an assistant
(`paradigm = "none"`, study.control_arm); with several, the first by name.

The design decides how (study.plan.comparisons.pairing, the rule a planned comparison takes
too). Between subjects (`[design] assignment = "between"`) the difference is of two
independent groups of sessions, each resampled on its own (`intervals.bootstrap_difference`),
even where a writer came back. Within subjects (`"within"`) it is the mean of each writer's
difference (of their mean per arm) over the writers with a value in both arms, writers
resampled (`intervals.bootstrap_mean`), so that a writer's own level cancels out, as in Dhillon
et al.'s Latin square, however many stopped part-way. Where the design is not known (an export,
the CoAuthor release) it is inferred: paired when most of the two arms' writers wrote in both.
"""

from __future__ import annotations

from collections.abc import Callable

from study.plan import comparisons
from study.report.data import ReportData
from study.report.html import Section
from study.report.survey_answers import NOT_ASKED
from study.report.intervals import (
    RESAMPLES,
    Estimate,
    bootstrap_difference,
    bootstrap_mean,
    few_note,
)

LOGGED = (
    ("time (min)", "time"), ("length (words)", "final_words"),
    ("written by writers (%)", "writer_share_final"), ("typed (%)", "typed_share"),
    ("outside (%)", "outside_share"),
)  # fmt: skip


def outcomes(data: ReportData) -> list[tuple[str, dict[str, float | None]]]:
    """(heading, session id -> value) for every outcome the data has."""
    found = []
    for heading, column in LOGGED:
        values = {s.session_id: s.stats.get(column) for s in data.sessions if column in s.stats}
        if values:
            found.append((heading, values))
    for question in data.questions:
        if question.kind != "scale":
            continue
        values = {}
        for session_id, answers in data.answers.items():
            value = str(answers.get(question.id, "")).strip()
            if value.lstrip("-").isdigit():
                values[session_id] = int(value)
        if values:
            found.append((f"{question.id} (survey)", values))
    return found


def not_asked(data: ReportData) -> dict[str, set[str]]:
    """Outcome heading (as `outcomes` names it) -> the arms its survey did not ask."""
    arms = data.conditions()
    return {f"{q.id} (survey)": {a for a in arms if not q.asked_of(a)} for q in data.questions if q.arms}


def difference(
    values: dict[str, float | None], arm: list[str], control: list[str], writer_of: Callable[[str], str],
    design: str | None = None,
) -> tuple[Estimate, str]:
    """The arm's difference from the control and how it was taken: "paired" by writer, each
    writer's sessions in an arm averaged (and how many writers in one arm only were left out),
    or "independent", as the `design` says (study.plan.comparisons.pairing)."""
    arm_writers = comparisons.writer_means(values, arm, writer_of)
    control_writers = comparisons.writer_means(values, control, writer_of)
    taken = comparisons.pairing(arm_writers, control_writers, design)
    if taken.writers is None:
        return bootstrap_difference([values.get(s) for s in arm], [values.get(s) for s in control]), "independent"
    estimate = bootstrap_mean([arm_writers[w] - control_writers[w] for w in taken.writers])
    return estimate, f"paired ({taken.one_arm_only} in one arm only left out)" if taken.one_arm_only else "paired"


def build(data: ReportData) -> Section | None:
    condition_of = data.condition_of()
    arms = data.conditions()
    if len(arms) < 2:
        return None
    members = {arm: [s for s, c in condition_of.items() if c == arm] for arm in arms}
    measured = outcomes(data)
    if not measured:
        return None
    writers = {s.session_id: s.writer for s in data.sessions}
    section = Section("arms", "Arms compared")
    controls = sorted(data.control_conditions())
    section.paragraph(
        "Each outcome's mean per arm with its 95% percentile-bootstrap interval "
        f"({RESAMPLES} resamples, fixed seed; none for fewer than 3 sessions)"
        + (f", and each arm's difference from the control arm, {controls[0]}: between "
           "subjects the two groups of sessions are resampled independently, even where a writer "
           "came back; within subjects the difference is each writer's own, over the writers "
           "with a value in both arms (those in one arm only are left out, and counted), "
           "writers resampled, however many stopped part-way." if controls else "; the study has "
           "no control arm (paradigm \"none\"), so no difference from a control is given."),
        note=True,
    )  # fmt: skip
    if controls and data.design is None:
        section.paragraph("The design (between or within subjects) is not known from this folder (no "
                          "study.toml, no within.json), so it was inferred: each difference is paired "
                          "where most of the two arms' writers wrote in both, else independent.",
                          note=True)  # fmt: skip
    unasked = not_asked(data)
    per_arm = {
        arm: [NOT_ASKED if arm in unasked.get(heading, ()) else bootstrap_mean([values.get(s) for s in members[arm]])
              for heading, values in measured]
        for arm in arms
    }  # fmt: skip
    rows = []
    for arm in arms if controls else ():
        if arm == controls[0]:
            continue
        cells, kinds = [], set()
        for heading, values in measured:
            if unasked.get(heading, set()) & {arm, controls[0]}:
                cells.append(NOT_ASKED)  # no difference to an arm that was never asked the question
                continue
            estimate, kind = difference(values, members[arm], members[controls[0]], lambda s: writers.get(s, ""),
                                        data.design)
            cells.append(estimate)
            kinds.add(kind)
        rows.append([f"{arm} - {controls[0]}", " / ".join(sorted(kinds)), *cells])
    caveat = few_note(e.n for estimates in [*per_arm.values(), *(row[2:] for row in rows)] for e in estimates
                      if isinstance(e, Estimate))
    if caveat:
        section.paragraph(caveat, note=True)
    section.table(
        ["arm", "sessions", *(heading for heading, _ in measured)],
        [[arm, len(members[arm]), *per_arm[arm]] for arm in arms],
    )  # fmt: skip
    if not controls:
        return section
    section.add("<h3>Difference from the control arm</h3>")
    section.paragraph("Paired, the difference is the mean over the writers in both arms of each one's own "
                      "difference (their sessions in an arm averaged first), so it can differ from the "
                      "difference of the arm means above, which are over all of each arm's sessions.", note=True)  # fmt: skip
    section.table(["arms", "comparison", *(heading for heading, _ in measured)], rows)
    return section
