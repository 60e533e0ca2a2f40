"""The plan, first: the planned comparisons of the preregistration record with their
estimates, and every deviation from the record next to them (study.report.plan)."""

from __future__ import annotations

import math

from study.plan.comparisons import RESAMPLES, SEED, Difference
from study.plan.record import RECORD_NAME, digest
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import few_note
from study.report.shown_paths import shown


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def taken_as(estimate: Difference) -> str:
    """The "taken as" cell: independent, or paired over how many writers and how many left out."""
    if not estimate.paired:
        return "independent"
    left_out = f" ({estimate.one_arm_only} in one arm only left out)" if estimate.one_arm_only else ""
    return f"paired, {estimate.participants} writers{left_out}"


def build(data: ReportData) -> Section | None:
    facts = data.extras.get("plan")
    if facts is None:
        return None
    section = Section("plan", "Planned comparisons")
    if facts.signed is None and not facts.problem:
        section.paragraph("No preregistration record (study preregister): every comparison in this "
                          "report is exploratory.")  # fmt: skip
        return section
    if facts.problem:
        # The record's path as the report shows paths (study.report.shown_paths), not this disk's.
        record = data.path / RECORD_NAME
        problem = facts.problem.replace(str(record), shown(record, data.report_folder))
        section.paragraph(f"The preregistration record cannot be trusted: {problem}")
        if facts.signed is None:
            return section
    signed = facts.signed
    # The digest is what a researcher deposits (OSF, AsPredicted): a reader checks it there.
    section.paragraph(f"Preregistered {signed['recorded_at']} (preregistration.json, Ed25519-signed, "
                      f"SHA-256 {digest(signed)}). These comparisons were fixed before launch; every other "
                      "figure of this report is exploratory.", note=True)  # fmt: skip
    if replaced := signed.get("replaces"):
        # `study preregister --replace`, before anyone started: a deposit of the earlier
        # record must not read as the plan this report follows.
        section.paragraph(f"This record replaces one made {replaced['recorded_at']} (SHA-256 "
                          f"{replaced['sha256']}), recorded again before any participant started; the "
                          "study's folder keeps it as preregistration.replaced-*.json.", note=True)  # fmt: skip
    if signed["plan"].get("hypotheses"):
        section.paragraph(f"Hypotheses: {signed['plan']['hypotheses']}")
    rows = []
    for comparison, outcome, estimate in facts.estimates:
        interval = None
        if not math.isnan(estimate.low):
            interval = f"[{estimate.low:.2f}, {estimate.high:.2f}]"
        rows.append([
            comparison.get("name", ""), f"{outcome['name']} ({outcome.get('measure', '')})",
            f"{comparison['treatment']} vs {comparison['control']}", comparison.get("direction", "two-sided"),
            comparison.get("hypothesis", ""), f"{estimate.n_treatment} / {estimate.n_control}",
            _number(estimate.treatment), _number(estimate.control), _number(estimate.difference), interval,
            taken_as(estimate),
        ])  # fmt: skip
    section.table(["comparison", "outcome", "arms", "predicted", "hypothesis", "sessions (T / C)",
                   "treatment mean", "control mean", "difference", "95% interval", "taken as"], rows)  # fmt: skip
    section.paragraph("Difference: treatment mean minus control mean. 95% interval: two-sided whatever the "
                      "predicted direction (read against a one-sided prediction, it is a test at the 2.5% "
                      f"level), the percentile bootstrap of the difference of means ({RESAMPLES} resamples, "
                      f"numpy's default_rng seeded {SEED}). "
                      "Independent: over each arm's sessions, each arm resampled on its own (none with fewer "
                      "than 3 sessions in an arm). "
                      "Paired: the mean of each writer's own difference, the means over those writers, "
                      "writers resampled (none with fewer than 3). The design the record fixed decides which "
                      "(study.plan.comparisons.pairing): within subjects always paired, over the writers with "
                      "a value in both arms (those who stopped before writing in one of them are left out, "
                      "and counted here), however many stopped; between subjects always independent, even "
                      "where a writer came back.", note=True)  # fmt: skip
    if any(e.inferred for _, _, e in facts.estimates):
        section.paragraph("The record does not hold the study's design (no configuration in it), so how each "
                          "comparison is taken was inferred from the data: paired where most of the two arms' "
                          "writers wrote in both.", note=True)  # fmt: skip
    # Paired, the units are the writers in both arms; otherwise each arm's sessions.
    caveat = few_note((e.participants if e.paired else min(e.n_treatment, e.n_control) for _, _, e in facts.estimates),
                      "sessions or writers")  # fmt: skip
    if caveat:
        section.paragraph(caveat, note=True)
    if facts.ruled_out:
        counts = "; ".join(f"{name}: {len(out)} session(s)" for name, out in facts.ruled_out)
        both = len(set().union(*(out for _, out in facts.ruled_out)))
        section.paragraph(f"Left out by the record's exclusion rules ([[plan.exclude]]), before these "
                          f"comparisons, {both} session(s) in all: {counts}. A survey rule leaves out "
                          "every session of a writer whose answer it excludes.", note=True)  # fmt: skip
    if facts.simulated_left_out:
        section.paragraph(f"{facts.simulated_left_out} session(s) of simulated writers (study simulate) are "
                          "left out of these comparisons.", note=True)  # fmt: skip
    if facts.deviations is None:
        section.paragraph("Deviations from the record can be listed only from the study folder.", note=True)
    elif not facts.deviations:
        section.paragraph("No deviation from the record.")
    else:
        section.add("<h3>Deviations from the record</h3>")
        section.table(["kind", "what", "detail"], [[d.kind, d.what, d.detail] for d in facts.deviations])
    return section
