"""Suggestion latency and failures, per condition."""

from __future__ import annotations

import statistics
from collections import defaultdict

from study.control_arm import NOT_APPLICABLE
from study.report import plots
from study.report.data import ReportData
from study.report.html import Section
from study.store.provenance import SEPARATOR


def build(data: ReportData) -> Section | None:
    section = Section("suggestions", "Suggestion latency and failures")
    latencies: dict[str, list[float]] = defaultdict(list)
    failures: dict[str, int] = defaultdict(int)
    asked: dict[str, int] = defaultdict(int)
    if data.requests is not None:
        section.paragraph(
            "From the server's log of suggestion requests: latency is the model endpoint's "
            "answer time; a failure is an error or timeout the writer was told about."
            + (" In a chat study the requests are the assistant's replies." if data.unlogged else ""),
            note=True,
        )
        for request in data.requests:
            condition = request["condition"]
            asked[condition] += 1
            if request["error"]:
                failures[condition] += 1
            elif request["latency_ms"] is not None:
                latencies[condition].append(request["latency_ms"])
    else:
        section.paragraph(
            "From the logs: latency is the time from `suggestion-get` to the `suggestion-open` "
            "that shows the list; a query without a list (a `suggestion-fail`, or none at all) "
            "counts as unanswered. Latency here includes the network and the browser.",
            note=True,
        )
        for s in data.sessions:
            asked[s.condition] += s.queries
            failures[s.condition] += s.unanswered
            latencies[s.condition].extend(s.latencies_ms)
    controls = sorted(data.control_conditions())
    if not any(asked.values()):
        section.paragraph("No suggestion was requested.", note=True)
        if not controls:
            return _with_models(section, data)
    rows = []
    for condition in controls:
        # A control arm had no assistant: its figures do not exist, which 0 would misstate.
        rows.append([condition, *[NOT_APPLICABLE] * 5])
    for condition in sorted(c for c in asked if c not in controls):
        values = latencies[condition]
        rows.append([
            condition, asked[condition], failures[condition],
            100 * failures[condition] / asked[condition] if asked[condition] else None,
            round(statistics.median(values)) if values else None,
            round(statistics.quantiles(values, n=20)[-1]) if len(values) >= 2 else None,
        ])  # fmt: skip
    failed = "failed" if data.requests is not None else "unanswered"
    section.table(["condition", "requests", failed, f"{failed} (%)", "median ms", "95th pct ms"], rows)
    if any(latencies.values()):
        section.figure(plots.boxes(dict(sorted(latencies.items())), ylabel="latency (ms)"),
                       "Suggestion latency per condition (ms).")  # fmt: skip
    return _with_models(section, data)


def _with_models(section: Section, data: ReportData) -> Section:
    if data.requests:
        _models(section, [(r["condition"], r.get("configured"), None if r["error"] else r.get("model"))
                          for r in data.requests])  # fmt: skip
    elif data.models:  # an export folder: its models.csv
        # Both cells may name several models, joined by SEPARATOR (a session whose calls were
        # sent with two: a model swapped and the server restarted while it ran).
        _models(section, [(r["condition"], asked, None) for r in data.models
                          for asked in (r.get("model") or "").split(SEPARATOR)]
                         + [(r["condition"], None, answering) for r in data.models
                            for answering in (r.get("answered_model") or "").split(SEPARATOR)])  # fmt: skip
    return section


def _models(section: Section, calls: list[tuple[str, str | None, str | None]]) -> None:
    """Provenance (issue 20): the model each condition asked for beside the one(s) the endpoint
    said answered, so a stand-in (a local model serving a configured name) cannot go unnoticed.
    `calls`: (condition, configured model, answering model or None)."""
    configured: dict[str, set[str]] = defaultdict(set)
    answered: dict[str, set[str]] = defaultdict(set)
    for condition, asked, answering in calls:
        if asked:
            configured[condition].add(asked)
        if answering:
            answered[condition].add(answering)
    rows = [
        [condition, "; ".join(sorted(configured[condition])) or None,
         "; ".join(sorted(answered[condition])) or "none answered"]
        for condition in sorted(set(configured) | set(answered))
    ]  # fmt: skip
    section.paragraph(
        "Models: the name each condition asked the endpoint for, and the model(s) the endpoint's "
        "replies named as having answered (a version of the alias, or another model standing in).",
        note=True,
    )
    section.table(["condition", "configured model", "answered by"], rows)
