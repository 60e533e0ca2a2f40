"""How well a metric tracks editing effort: Pearson r and Spearman rho with p-values.

MindCopilot §4.2 and Table 2 validate KED by its correlation with editing duration on CoAuthor
logs (KED: Pearson 0.686, Spearman 0.786; Levenshtein 0.587 / 0.684).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True)
class Correlation:
    n: int
    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float


def correlate(values: Sequence[float], durations: Sequence[float]) -> Correlation:
    if len(values) != len(durations):
        raise ValueError(f"{len(values)} metric values but {len(durations)} durations")
    if len(values) < 3 or len(set(values)) < 2 or len(set(durations)) < 2:
        return Correlation(len(values), math.nan, math.nan, math.nan, math.nan)
    pearson = stats.pearsonr(values, durations)
    spearman = stats.spearmanr(values, durations)
    return Correlation(len(values), float(pearson[0]), float(pearson[1]),
                       float(spearman[0]), float(spearman[1]))
