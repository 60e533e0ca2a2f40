"""A planned comparison's estimate: each arm's mean with its interval, and the difference.

The difference of means (treatment minus control) with a 95% percentile-bootstrap interval;
seeded, so the same data gives the same interval. Between subjects the two arms' sessions are
resampled independently (sessions are the unit, as in study.report.intervals; no interval with
fewer than three sessions in an arm). Within subjects (most of the two arms' writers wrote in
both: `[design] assignment = "within"`) each writer is the unit: the difference is the mean of
each writer's own difference (of their mean per arm), writers resampled (no interval with fewer
than three), so a writer's own level cancels out, as the report's "Arms compared" takes it; an
analysis of independent groups there would misstate the preregistered test's interval. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    participants: int = 0  # paired: the writers in both arms; 0: independent groups of sessions


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


def estimate(values: Mapping[str, float | None], arm_of: Mapping[str, str], writer_of: Mapping[str, str],
             treatment: str, control: str, *, seed: int = SEED) -> Difference:
    """The comparison of `treatment` with `control` over sessions' `values`: paired by writer
    when most of the two arms' writers wrote in both (a within-subjects design, a few dropouts
    aside), else of two independent groups (a writer or two who came back to a
    between-subjects study do not make it paired)."""
    sides = {side: {s: v for s, v in values.items() if arm_of.get(s) == side and _finite(v)}
             for side in (treatment, control)}  # fmt: skip
    by_writer: dict[str, dict[str, list[float]]] = {treatment: {}, control: {}}
    for side, measured in sides.items():
        for session_id, value in measured.items():
            if writer_of.get(session_id):
                by_writer[side].setdefault(writer_of[session_id], []).append(float(value))
    shared = sorted(by_writer[treatment].keys() & by_writer[control].keys())
    if not shared or 2 * len(shared) <= len(by_writer[treatment].keys() | by_writer[control].keys()):
        return difference(list(sides[treatment].values()), list(sides[control].values()), seed=seed)
    t = np.asarray([np.mean(by_writer[treatment][w]) for w in shared], dtype=float)
    c = np.asarray([np.mean(by_writer[control][w]) for w in shared], dtype=float)
    differences = t - c
    low = high = math.nan
    if differences.size >= MIN_SESSIONS:
        rng = np.random.default_rng(seed)
        boot = differences[rng.integers(0, differences.size, size=(RESAMPLES, differences.size))].mean(axis=1)
        low, high = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
    return Difference(len(sides[treatment]), len(sides[control]), float(t.mean()), float(c.mean()),
                      float(differences.mean()), low, high, participants=len(shared))  # fmt: skip


def _finite(value) -> bool:
    return value is not None and not math.isnan(value)
