"""A planned comparison's estimate: each arm's mean with its interval, and the difference.

The difference of means (treatment minus control) with a 95% percentile-bootstrap interval,
resampling each arm's sessions independently (sessions are the unit, as in
study.report.intervals); seeded, so the same data gives the same interval; no interval with
fewer than three sessions in an arm. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 20230423  # CHI 2023, Jakesch et al.'s venue: any fixed number would do
MIN_SESSIONS = 3


@dataclass(frozen=True)
class Difference:
    n_treatment: int
    n_control: int
    treatment: float
    control: float
    difference: float
    low: float
    high: float


def difference(treatment: Sequence[float], control: Sequence[float], *, seed: int = SEED) -> Difference:
    t = np.asarray([v for v in treatment if v is not None and not math.isnan(v)], dtype=float)
    c = np.asarray([v for v in control if v is not None and not math.isnan(v)], dtype=float)
    if t.size == 0 or c.size == 0:
        return Difference(int(t.size), int(c.size), math.nan, math.nan, math.nan, math.nan, math.nan)
    mean_t, mean_c = float(t.mean()), float(c.mean())
    low = high = math.nan
    if t.size >= MIN_SESSIONS and c.size >= MIN_SESSIONS:
        rng = np.random.default_rng(seed)
        boot_t = t[rng.integers(0, t.size, size=(RESAMPLES, t.size))].mean(axis=1)
        boot_c = c[rng.integers(0, c.size, size=(RESAMPLES, c.size))].mean(axis=1)
        low, high = (float(x) for x in np.percentile(boot_t - boot_c, [2.5, 97.5]))
    return Difference(int(t.size), int(c.size), mean_t, mean_c, mean_t - mean_c, low, high)
