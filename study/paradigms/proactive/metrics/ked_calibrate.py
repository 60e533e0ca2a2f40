"""Calibrate KED's weights against editing duration (spec A3.2, "Calibration").

MindCopilot validates KED by its correlation with how long writers took to edit accepted
suggestions in CoAuthor (§4.2, Table 2). The toolkit's weights are a proposal, so they are fitted
on a calibration split and judged on a held-out split: non-negative least squares of duration on
the per-category edit counts (scipy.optimize.nnls; a linear fit is our proxy for "maximise
Spearman's rho", which has no gradient), then Spearman's rho of KED with the fitted and with the
default weights on the held-out instances, next to the character Levenshtein baseline.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from study.paradigms.proactive.metrics.correlate import Correlation, correlate
from study.paradigms.proactive.metrics.ked import CATEGORIES, WEIGHTS


@dataclass(frozen=True)
class Instance:
    counts: Mapping[str, int]  # category -> edits carrying it (from the KED judge)
    duration: float  # seconds
    levenshtein: int


@dataclass(frozen=True)
class Calibration:
    weights: dict[str, float]
    calibration_n: int
    held_out_fitted: Correlation
    held_out_default: Correlation
    held_out_levenshtein: Correlation


def split(instances: Sequence[Instance], held_out: float = 0.3, seed: int = 0):
    order = list(range(len(instances)))
    random.Random(seed).shuffle(order)
    cut = int(round(len(order) * (1 - held_out)))
    return [instances[i] for i in order[:cut]], [instances[i] for i in order[cut:]]


def weighted(instance: Instance, weights: Mapping[str, float]) -> float:
    return float(sum(weights.get(c, 0.0) * n for c, n in instance.counts.items()))


def ked_calibrate(instances: Sequence[Instance], held_out: float = 0.3, seed: int = 0) -> Calibration:
    fit, test = split(instances, held_out, seed)
    if len(fit) < len(CATEGORIES) or len(test) < 3:
        raise ValueError(
            f"{len(instances)} post-editing instances are too few to calibrate "
            f"{len(CATEGORIES)} weights; use more sessions"
        )
    x = np.array([[i.counts.get(c, 0) for c in CATEGORIES] for i in fit], dtype=float)
    y = np.array([i.duration for i in fit], dtype=float)
    solution, _ = nnls(x, y)
    weights = {c: round(float(w), 4) for c, w in zip(CATEGORIES, solution)}
    durations = [i.duration for i in test]
    return Calibration(
        weights=weights,
        calibration_n=len(fit),
        held_out_fitted=correlate([weighted(i, weights) for i in test], durations),
        held_out_default=correlate([weighted(i, WEIGHTS) for i in test], durations),
        held_out_levenshtein=correlate([float(i.levenshtein) for i in test], durations),
    )
