"""Confidence intervals for per-session means, as the report prints them.

Method: the percentile bootstrap. The sessions of a group are resampled with replacement
`RESAMPLES` times, the mean is taken each time, and the 2.5th and 97.5th percentiles of those
means bound the 95% interval. Sessions are the unit (not events or sentences), because the
writer's choices within a session are not independent. The generator is seeded and the values
resampled sorted, so the same values always give the same interval, whatever order they come
in (study.plan.comparisons.SEED). A bootstrap needs no normality assumption, which matters for
bounded, skewed figures such as an acceptance rate; with fewer than `MIN_SESSIONS` sessions no
interval is given (it would mostly reflect the few values themselves).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from study.plan.comparisons import RESAMPLES, SEED  # one seed and one count for every interval

LEVEL = 0.95
MIN_SESSIONS = 3


@dataclass(frozen=True)
class Estimate:
    n: int
    mean: float
    low: float
    high: float

    @property
    def has_interval(self) -> bool:
        return not math.isnan(self.low)


def finite(values: Sequence[float | int | None]) -> list[float]:
    out = []
    for value in values:
        if value is None:
            continue
        value = float(value)
        if not math.isnan(value):
            out.append(value)
    return out


def bootstrap_mean(values: Sequence[float | int | None], *, seed: int = SEED) -> Estimate:
    """The mean of `values` (NaN and None left out) with its 95% percentile-bootstrap interval."""
    data = np.sort(np.asarray(finite(values), dtype=float))  # sorted: study.plan.comparisons.SEED
    if data.size == 0:
        return Estimate(0, math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if data.size < MIN_SESSIONS:
        return Estimate(int(data.size), mean, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(RESAMPLES, data.size))].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(int(data.size), mean, float(low), float(high))


def bootstrap_difference(
    treated: Sequence[float | int | None], control: Sequence[float | int | None], *, seed: int = SEED
) -> Estimate:
    """mean(treated) - mean(control) for two independent groups of sessions (arms assigned
    between subjects), with its 95% percentile-bootstrap interval: each group is resampled on
    its own. `n` is the smaller group's size; no interval when either has fewer than
    MIN_SESSIONS. For arms a writer took in turn (within subjects), take `bootstrap_mean` of
    each writer's difference instead: the writers are then the unit."""
    a, b = np.sort(np.asarray(finite(treated), dtype=float)), np.sort(np.asarray(finite(control), dtype=float))
    if a.size == 0 or b.size == 0:
        return Estimate(min(a.size, b.size), math.nan, math.nan, math.nan)
    difference = float(a.mean() - b.mean())
    if min(a.size, b.size) < MIN_SESSIONS:
        return Estimate(int(min(a.size, b.size)), difference, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    draws = (a[rng.integers(0, a.size, size=(RESAMPLES, a.size))].mean(axis=1)
             - b[rng.integers(0, b.size, size=(RESAMPLES, b.size))].mean(axis=1))  # fmt: skip
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Estimate(int(min(a.size, b.size)), difference, float(low), float(high))


# The percentile bootstrap is too narrow over few units: the resampled means spread by
# sqrt((n - 1) / n) of the standard error, and without the t distribution's tails (Hesterberg
# 2015, "What teachers should know about the bootstrap", its "narrowness bias"). Measured by simulation (4,000
# samples of normal values, 1,000 resamples each), these are the shares of "95%" intervals that
# held the true mean. A report says so where its smallest group is below FEW, rather than
# change a method that is sound for the sizes a study is planned for.
FEW = 20
COVERAGE = "74% held the true mean with 3 values, 83% with 5, 90% with 10, 93% with 20"


def few_note(sizes: Iterable[int], units: str = "sessions") -> str:
    """The caveat for intervals over groups of `sizes` units (those too small for an interval
    left out), or "" when the smallest is FEW or more."""
    smallest = min((n for n in sizes if n >= MIN_SESSIONS), default=FEW)
    if smallest >= FEW:
        return ""
    return (f"Few {units}: the smallest group with an interval here has {smallest}. Over so few, a "
            "percentile-bootstrap interval is too narrow: of \"95%\" intervals of a mean of normal "
            f"values, {COVERAGE}. Read these as a pilot's, or compute a t interval from the export.")
