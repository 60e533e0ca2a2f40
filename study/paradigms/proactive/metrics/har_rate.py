"""HAR over a collection: HAR(%) = 100 * (1/N) * sum_i a_i (MindCopilot §4.1).

Subgroup rates are pooled counts over the subgroup's queries, not means of per-domain rates
(spec A3.1 [D]: Table 11's cells times the query counts reproduce Table 4 exactly). Invalid
verdicts are left out of N and reported. The 95% interval is a bootstrap over queries.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rate:
    percent: float  # NaN when there is nothing to rate
    accepted: int
    n: int
    invalid: int = 0
    ci: tuple[float, float] | None = None


def har_rate(verdicts: Iterable[bool | None], bootstrap: int = 0, seed: int = 0) -> Rate:
    """`verdicts`: True (accept), False (reject) or None (invalid)."""
    values = list(verdicts)
    valid = [v for v in values if v is not None]
    n, accepted = len(valid), sum(1 for v in valid if v)
    percent = 100 * accepted / n if n else math.nan
    ci = bootstrap_ci(valid, bootstrap, seed) if bootstrap and n else None
    return Rate(percent, accepted, n, len(values) - n, ci)


def bootstrap_ci(values: Sequence[bool | float], resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the mean (x100) over resampled values."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(100 * sum(rng.choice(values) for _ in range(n)) / n for _ in range(resamples))
    return means[int(0.025 * (resamples - 1))], means[int(0.975 * (resamples - 1))]


def pooled(rates: Iterable[Rate]) -> Rate:
    """Several subgroups as one: counts added, never rates averaged."""
    rates = list(rates)
    accepted = sum(r.accepted for r in rates)
    n = sum(r.n for r in rates)
    return Rate(100 * accepted / n if n else math.nan, accepted, n, sum(r.invalid for r in rates))
