"""MindCopilot's continuation benchmark (§5.2, App. D, App. H): replay queries through a model
in the L1 and L2 paradigms and judge every suggestion with HAR, then KED on the accepted ones.

Queries are JSON lines, in article order (schemas/proactive-queries.schema.json):
`{"article", "domain", "category": "scientific" | "creative", "context", "reference",
"progress"}`: the preceding text, the true continuation, and the position in the article (0-1).

L1 sees a local window of the context. L2 sees the context as a marked-up snapshot whose
history is simulated (spec A5 [I], the paper does not say): after each query of an article its
suggestion is recorded as `<accept>` or `<reject>` by its HAR verdict, and the true text up to
the next query as `<add>`. The suggestion's KED is to the reference (the "final user-edited
text" of the simulation, spec A3.2). Results have the shape of Table 4 (HAR % / KED per
level, overall, scientific, creative), Table 11 (the same per domain) and Fig. 4 (HAR by
writing-progress bin, L2 - L1 with a bootstrap CI).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from study.config import Condition
from study.paradigms.proactive.curation.json_lines import read_json_lines
from study.paradigms.proactive.metrics.har import HarItem, har
from study.paradigms.proactive.metrics.har_rate import har_rate
from study.paradigms.proactive.metrics.ked import ked, ked_mean
from study.paradigms.proactive.context import HistoryItem

QUERY_KEYS = ("article", "domain", "category", "context", "reference", "progress")
BINS = (20, 40, 60, 80, 100)


class QueryFileError(ValueError):
    """A bad query line; the message names the file, line and field."""


@dataclass(frozen=True)
class Query:
    article: str
    domain: str
    category: str
    context: str
    reference: str
    progress: float

    @property
    def bin(self) -> int:
        return min(100, max(20, math.ceil(self.progress * 5) * 20))


@dataclass
class Outcome:
    level: str
    query: Query
    suggestion: str
    accept: bool | None
    rule: str
    ked: float | None
    error: str | None = None


def read_queries(path: Path) -> list[Query]:
    rows = read_json_lines(path, "proactive-queries.schema.json", QueryFileError)
    if not rows:
        raise QueryFileError(f"{path}: no queries")
    return [Query(**{k: data[k] for k in QUERY_KEYS}) for _, data in rows]


def simulated_history(previous: Sequence[tuple[Query, str, bool | None]], query: Query) -> list[HistoryItem]:
    """L2's history for `query` from the article's earlier queries (spec A5 [I])."""
    items: list[HistoryItem] = []
    for i, (earlier, suggestion, accepted) in enumerate(previous):
        at = len(earlier.context)
        if suggestion:
            items.append(HistoryItem("accept" if accepted else "reject", at, text=suggestion))
        following = previous[i + 1][0] if i + 1 < len(previous) else query
        end = min(len(following.context), len(query.context))
        if end > at:
            items.append(HistoryItem("add", at, length=end - at))
    return items


def run(queries: Sequence[Query], engine, condition: Condition, judge, levels: Iterable[str] = ("L1", "L2")) -> list[Outcome]:
    """`engine`: a ProactiveEngine; `condition` names the model (its paradigm is set per level)."""
    from dataclasses import replace

    outcomes = []
    for level in levels:
        cond = replace(condition, paradigm=level)
        history: dict[str, list[tuple[Query, str, bool | None]]] = defaultdict(list)
        for query in queries:
            previous = history[query.article]
            items = simulated_history(previous, query) if level == "L2" else []
            result = engine.suggest(cond, query.context, items)
            if result.error:
                outcomes.append(Outcome(level, query, "", None, "", None, result.error))
                previous.append((query, "", None))
                continue
            verdict = har(HarItem(query.context, query.reference, result.suggestion), judge)
            distance = None
            if verdict.accept:
                distance = ked(result.suggestion, query.reference, judge, context=query.context).value
            outcomes.append(Outcome(level, query, result.suggestion, verdict.accept, verdict.rule, distance))
            previous.append((query, result.suggestion, verdict.accept))
    return outcomes


def table4(outcomes: Sequence[Outcome]) -> list[dict]:
    """One row per level: HAR % and KED for Overall, Scientific, Creative (Table 4's shape)."""
    rows = []
    for level in sorted({o.level for o in outcomes}):
        row = {"level": level}
        for name, keep in (("overall", lambda o: True), ("scientific", lambda o: o.query.category == "scientific"),
                           ("creative", lambda o: o.query.category == "creative")):
            group = [o for o in outcomes if o.level == level and keep(o)]
            rate = har_rate(o.accept for o in group)
            row[f"{name}_har"] = round(rate.percent, 2) if rate.n else math.nan
            row[f"{name}_ked"] = round(ked_mean(o.ked for o in group if o.accept), 2)
            row[f"{name}_n"] = rate.n
        row["invalid_or_failed"] = sum(1 for o in outcomes if o.level == level and o.accept is None)
        rows.append(row)
    return rows


def table11(outcomes: Sequence[Outcome]) -> list[dict]:
    """One row per level and domain: HAR % over the domain's queries, KED over its HAR-accepted
    ones (NaN when none), and the counts (Table 11's shape). Table 4's Overall, Scientific and
    Creative are these domains' counts pooled, never the mean of their rates (spec A3.1 [D])."""
    rows = []
    for level in sorted({o.level for o in outcomes}):
        mine = [o for o in outcomes if o.level == level]
        for domain in sorted({o.query.domain for o in mine}, key=_domain_order):
            group = [o for o in mine if o.query.domain == domain]
            rate = har_rate(o.accept for o in group)
            rows.append({
                "level": level, "domain": domain, "category": group[0].query.category,
                "har": round(rate.percent, 2) if rate.n else math.nan,
                "ked": round(ked_mean(o.ked for o in group if o.accept), 2),
                "accepted": rate.accepted, "n": rate.n, "invalid_or_failed": rate.invalid,
            })  # fmt: skip
    return rows


def _domain_order(domain: str) -> tuple:
    """D1 .. D16 in the paper's order (D2 before D10), other names after them by name."""
    head = domain.split()[0]
    return (0, int(head[1:]), domain) if head[:1] == "D" and head[1:].isdigit() else (1, 0, domain)


def figure4(outcomes: Sequence[Outcome], resamples: int = 1000, seed: int = 0) -> list[dict]:
    """HAR by writing-progress bin per level, and L2 - L1 with a paired bootstrap 95% CI."""
    by = defaultdict(dict)
    for o in outcomes:
        if o.accept is not None:
            by[(o.level, o.query.bin)][id(o.query)] = o.accept
    rows = []
    rng = random.Random(seed)
    for b in BINS:
        l1, l2 = by.get(("L1", b), {}), by.get(("L2", b), {})
        row = {"bin": b}
        for level, values in (("L1", l1), ("L2", l2)):
            row[f"{level}_har"] = round(100 * sum(values.values()) / len(values), 2) if values else math.nan
            row[f"{level}_n"] = len(values)
        paired = [k for k in l1 if k in l2]
        if paired:
            diffs = [100 * (l2[k] - l1[k]) for k in paired]
            means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(resamples))
            row["delta"] = round(sum(diffs) / len(diffs), 2)
            row["delta_low"] = round(means[int(0.025 * (resamples - 1))], 2)
            row["delta_high"] = round(means[int(0.975 * (resamples - 1))], 2)
        else:
            row["delta"] = row["delta_low"] = row["delta_high"] = math.nan
        rows.append(row)
    return rows
