"""Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

alpha = 1 - D_o / D_e over the pairable values (items with at least two ratings). With the
coincidence matrix o_ck = sum over items u of (pairs of values c, k in u) / (m_u - 1), the
marginals n_c = sum_k o_ck and n = sum_c n_c:
    D_o = sum_c sum_k o_ck delta^2(c, k) / n,
    D_e = sum_c sum_k n_c n_k delta^2(c, k) / (n (n - 1)).
The difference functions delta^2:
    nominal: 0 if c = k else 1;
    ordinal: (sum of n_g for g from c to k - (n_c + n_k) / 2)^2, ranks over the values used;
    interval: (c - k)^2.
The reviewers' workspace reports the ordinal alpha by default: rubric scores are ordered
categories whose spacing (is "great" as far above "reasonable" as "reasonable" is above "no
clear ending"?) the rubric does not define.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable

from study.review.agreement.data import Rating, by_item

LEVELS = ("nominal", "ordinal", "interval")


def krippendorff_alpha(ratings: Iterable[Rating], level: str = "ordinal") -> float:
    """Krippendorff's alpha at `level` ("nominal", "ordinal" or "interval"); NaN with fewer
    than two pairable values or when all pairable values are the same (D_e = 0)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    coincidences: dict[tuple[int, int], float] = defaultdict(float)
    for raters in by_item(ratings).values():
        values = list(raters.values())
        m = len(values)
        if m < 2:
            continue  # not pairable
        counts = Counter(values)
        for c, count_c in counts.items():
            for k, count_k in counts.items():
                pairs = count_c * (count_k - 1) if c == k else count_c * count_k
                coincidences[(c, k)] += pairs / (m - 1)
    marginals: Counter = Counter()
    for (c, _k), o in coincidences.items():
        marginals[c] += o
    n = sum(marginals.values())
    if n < 2:
        return math.nan
    delta = _difference(level, marginals)
    observed = sum(o * delta(c, k) for (c, k), o in coincidences.items()) / n
    expected = sum(
        marginals[c] * marginals[k] * delta(c, k) for c in marginals for k in marginals
    ) / (n * (n - 1))
    if expected == 0:
        return math.nan
    return 1 - observed / expected


def _difference(level: str, marginals: Counter):
    if level == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if level == "interval":
        return lambda c, k: float((c - k) ** 2)
    ordered = sorted(marginals)
    position = {value: i for i, value in enumerate(ordered)}

    def ordinal(c, k) -> float:
        low, high = sorted((position[c], position[k]))
        between = sum(marginals[ordered[g]] for g in range(low, high + 1))
        return (between - (marginals[c] + marginals[k]) / 2) ** 2

    return ordinal
