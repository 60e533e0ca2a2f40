"""Cohen's kappa (Cohen 1960; weighted: Cohen 1968) for two raters.

kappa = (p_o - p_e) / (1 - p_e), where p_o is the observed proportion of agreement over the
items both raters rated and p_e the agreement expected if each rater drew values independently
from their own marginal distribution. Weighted kappa replaces agreement by disagreement weights
w_ij (linear |i - j| / (k - 1), quadratic (i - j)^2 / (k - 1)^2 over the k categories of the scale):
kappa_w = 1 - sum(w * observed) / sum(w * expected). Unweighted kappa is the weighted one with
w = 0 on the diagonal and 1 elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence

from study.review.agreement.data import Rating, by_item

WEIGHTS = (None, "linear", "quadratic")


def cohen_kappa(
    ratings: Iterable[Rating],
    rater_a: Hashable,
    rater_b: Hashable,
    weights: str | None = None,
    categories: Sequence[int] | None = None,
) -> float:
    """Cohen's kappa of `rater_a` and `rater_b` over the items both rated (NaN: none, or
    p_e = 1). `weights`: None (unweighted), "linear" or "quadratic"; their k is the number of
    `categories` (the whole scale, e.g. a 1-5 rubric), by default the values used."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    pairs = [
        (raters[rater_a], raters[rater_b])
        for raters in by_item(ratings).values()
        if rater_a in raters and rater_b in raters
    ]
    if not pairs:
        return math.nan
    categories = sorted({value for pair in pairs for value in pair} | set(categories or ()))
    index = {value: i for i, value in enumerate(categories)}
    k, n = len(categories), len(pairs)

    def weight(i: int, j: int) -> float:
        if weights is None:
            return 0.0 if i == j else 1.0
        if k == 1:
            return 0.0
        distance = abs(i - j) / (k - 1)
        return distance if weights == "linear" else distance**2

    observed = [[0.0] * k for _ in range(k)]
    for a, b in pairs:
        observed[index[a]][index[b]] += 1 / n
    row = [sum(observed[i]) for i in range(k)]
    column = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    disagreement = sum(weight(i, j) * observed[i][j] for i in range(k) for j in range(k))
    expected = sum(weight(i, j) * row[i] * column[j] for i in range(k) for j in range(k))
    if expected == 0:
        return math.nan
    return 1 - disagreement / expected
