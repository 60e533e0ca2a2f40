"""Proactive co-writing's part of `study report` (study.paradigms.base: `report`): `load`
measures its sessions (study.paradigms.proactive.report_data), `build` draws MindCopilot's
section: acceptance, partial accepts, modify rate and edit distances per paradigm, HAR and KED
when a judge was given, and the post-task questionnaire per paradigm (Tab. 13, Fig. 6), pooling
the conditions that ran one paradigm (`study init --paradigm proactive` has one per genre)."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from study.lm.judge_backend import JudgeBackend
from study.metrics.judges.options import DETERMINISTIC_NOTE
from study.report import plots
from study.report.data import ReportData, ReportSourceError
from study.report.html import Section, cell
from study.report.intervals import RESAMPLES, bootstrap_mean
from study.paradigms.proactive.metrics.acceptance import DEFINITION
from study.paradigms.proactive.metrics.table5 import table5
from study.paradigms.proactive import report_data
from study.paradigms.proactive.report_data import ProactiveMetrics, summary
from study.report.sections import plugins
from study.report.sections.survey import numbers_of
from study.report.survey_dimensions import dimensions

TITLE = "Proactive co-writing (MindCopilot L1-L3)"
# A folder `study export --format proactive` wrote: its sessions.csv names each session's
# condition beside the extended logs (study.report.data reads it as the folder's metadata).
EXPORT_FILE = "sessions.csv"
EXPORT_WHAT = "proactive sessions"
NO_JUDGE = (
    "HAR (hierarchical acceptance rate: the judge's 17-rule checklist against the writer's own "
    "continuation after the suggestion) and KED (the "
    "judge's weighted edit distance) are not computed: they need an LLM judge. Run `study "
    "report ... --judge-endpoint URL --judge-model NAME`, or `--deterministic-judge` to try the "
    "pipeline offline (its numbers are not the paper's)."
)

TABLE5_COLUMNS = (
    ("paradigm", "paradigm"), ("sessions", "sessions"), ("editing time (min)", "editing_minutes"),
    ("active time (min)", "active_minutes"), ("window switches", "window_switches"),
    ("panel switches", "panel_switches"), ("assistant requests", "chat_requests"),
    ("suggestions shown", "shown"),
    ("acceptance macro (%)", "acceptance_macro"), ("acceptance micro (%)", "acceptance_micro"),
    ("modify rate (%)", "modify_rate"),
)
TABLE5_NOTE = (
    "Means per session of the paradigm. Editing time: the writing page's first event to its "
    "last; active time leaves out the time the page was blurred. Window switches: times the "
    "page lost focus to another window or tab; panel switches: moves between the editor and "
    "L0's assistant panel; assistant requests: what the writer sent it. Acceptance as defined above (none for L0, whose assistant makes no "
    "suggestion: Table 5's \"-\")."
)


def export_conditions(path: Path) -> dict[str, str]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return {row["session_id"]: row.get("condition") or row.get("paradigm") or "unknown"
                    for row in csv.DictReader(handle)}  # fmt: skip
    except (KeyError, csv.Error, UnicodeDecodeError) as error:
        raise ReportSourceError(f"{path}: cannot be read as proactive sessions ({error})") from None


def load(data: ReportData) -> None:
    report_data.load(data)


def build(data: ReportData) -> Section | None:
    entry = data.extras.get("proactive")
    if not isinstance(entry, ProactiveMetrics):
        return plugins.metrics_section("proactive", TITLE)(data)
    section = Section("proactive", TITLE)
    section.paragraph(
        "Per suggestion, as `study curate proactive` derives it from the extended logs (an "
        "accepted suggestion's final text is what its span holds 60 s after acceptance). "
        f"{DEFINITION} The Acceptance column of every other section of this report reads a "
        "proactive session's acceptance the same way. Partial "
        "accepts: suggestions taken word by word and not whole. Modify rate: accepted "
        "suggestions the writer then edited inside their span, of those accepted. Edit "
        "distances (characters, words) between an accepted suggestion and its final text.",
        note=True,
    )
    if entry.unfinished:
        section.paragraph(f"{entry.unfinished} unfinished session(s) in the folder (`finished=false` in its "
                          "sessions.csv, as `study export --all` writes them) are left out of this "
                          "section's figures, Table 5 included: they are of the sessions whose writer "
                          "finished writing, as on the study folder.", note=True)  # fmt: skip
    if not entry.judged:
        section.paragraph(NO_JUDGE, note=True)
    else:
        section.paragraph(f"HAR (hierarchical acceptance rate: the 17-rule checklist against the "
                          "writer's own text after the suggestion) and KED (knowledge-aware editing "
                          f"distance) judged by {entry.judge} (as `study curate proactive` judges "
                          "them: the full checklist, the default KED weights).", note=True)  # fmt: skip
        if entry.judge == JudgeBackend.model_id:
            section.paragraph(DETERMINISTIC_NOTE, note=True)
    headings = list(summary([], entry.judged))
    if not entry.judged:
        headings = [h for h in headings if h not in ("HAR (%)", "KED")]
    rows = []
    for paradigm in sorted({p for _, p, _ in entry.sessions}):
        ids = {s for s, p, _ in entry.sessions if p == paradigm}
        figures = summary([r for r in entry.rows if r["session_id"] in ids], entry.judged)
        rows.append([paradigm, len(ids), *(figures[h] for h in headings)])
    figures = summary(entry.rows, entry.judged)
    rows.append(["all", len(entry.sessions), *(figures[h] for h in headings)])
    section.add("<h3>Per paradigm</h3>")
    section.table(["paradigm", "sessions", *headings], rows)
    section.add("<h3>Per session, by condition</h3>")
    section.paragraph(f"Means of per-session figures with 95% intervals ({RESAMPLES} bootstrap "
                      "resamples of sessions; none for fewer than 3).", note=True)  # fmt: skip
    per_session = {}
    for session_id, _, _ in entry.sessions:
        figures = summary([r for r in entry.rows if r["session_id"] == session_id], entry.judged)
        per_session[session_id] = {h: figures[h] for h in headings if "macro" not in h}
    condition_of = {s: f"{c} ({p})" if p and p != c else c for s, p, c in entry.sessions}
    plugins.means_table(section, per_session, condition_of,
                        [h for h in headings if "macro" not in h])  # fmt: skip
    groups: dict[str, list] = {}
    for session_id, name in sorted(condition_of.items(), key=lambda item: item[1]):
        groups.setdefault(name, []).append(per_session[session_id]["acceptance micro (%)"])
    estimates = [(name, bootstrap_mean(values)) for name, values in groups.items()]
    if any(e.n for _, e in estimates):
        section.figure(plots.intervals(estimates, xlabel="acceptance (%)"),
                       "Acceptance of shown suggestions per condition: mean of per-session "
                       "rates and 95% CI.")  # fmt: skip
    section.add("<h3>Table 5: per paradigm, as MindCopilot's user study reports it</h3>")
    section.paragraph(TABLE5_NOTE, note=True)
    rows5 = table5(entry.figures, ((r["session_id"], r["outcome"]) for r in entry.rows))
    section.table([heading for heading, _ in TABLE5_COLUMNS],
                  [[row[key] for _, key in TABLE5_COLUMNS] for row in rows5])  # fmt: skip
    _questionnaire(section, data, entry)
    if entry.problems:
        section.paragraph(f"{len(entry.problems)} session file(s) could not be read, e.g. "
                          f"{entry.problems[0]}.", note=True)  # fmt: skip
    return section


def _questionnaire(section: Section, data: ReportData, entry: ProactiveMetrics) -> None:
    """MindCopilot's Table 13 and Fig. 6 are per paradigm (L0-L3), each pooling every writer who
    used it; the Survey results section is per condition, and a study may run a paradigm in
    several conditions (one per genre). The grouped scale items (PW, US, CU, AD) per paradigm:
    each item's mean, then each dimension's mean and shares (study.report.survey_dimensions)."""
    grouped = [replace(q, arms=()) for q in data.questions if q.kind == "scale" and q.group]
    paradigm_of = {session_id: paradigm for session_id, paradigm, _ in entry.sessions if paradigm}
    numeric: dict[str, dict[str, list[int]]] = {}
    for session_id, answers in data.answers.items():
        if session_id not in paradigm_of:
            continue
        by_item = numeric.setdefault(paradigm_of[session_id], {})
        for question in grouped:
            by_item.setdefault(question.id, []).extend(numbers_of([answers.get(question.id)]))
    if not grouped or not any(v for items in numeric.values() for v in items.values()):
        return
    numeric = dict(sorted(numeric.items()))
    section.add("<h3>Post-task questionnaire per paradigm (Table 13, Fig. 6)</h3>")
    section.paragraph(
        "The survey items grouped in dimensions, per paradigm over every session that ran it "
        "(whatever its condition): each item's mean (answers in brackets), then per dimension "
        "the mean of its item means and the shares of its answers above, at and below the "
        "scale's midpoint (Fig. 6's diverging bars), as the Survey results section gives them "
        "per condition.",
        note=True,
    )
    section.table(
        ["paradigm", *(q.id for q in grouped)],
        [[paradigm, *(f"{sum(v) / len(v):.2f} ({len(v)})" if (v := items.get(q.id)) else "–" for q in grouped)]
         for paradigm, items in numeric.items()],
    )  # fmt: skip
    section.table(
        ["paradigm", "dimension", "items", "mean", "% favourable", "% neutral", "% unfavourable"],
        [[d.condition, d.group, d.items, d.mean, *(cell(share, 1) for share in (d.favourable, d.neutral, d.unfavourable))]
         for d in dimensions(grouped, numeric)],
    )  # fmt: skip
