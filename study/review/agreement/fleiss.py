"""Fleiss' kappa (Fleiss 1971) for N items with n ratings each, by any raters.

For item i, P_i = (sum_j n_ij^2 - n) / (n (n - 1)) is the proportion of agreeing rater pairs,
where n_ij is the number of ratings of item i in category j; P = mean of P_i. With p_j the
share of all ratings in category j, P_e = sum_j p_j^2, and kappa = (P - P_e) / (1 - P_e).
The formula needs the same n for every item: callers keep the items with a full set of ratings.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from study.review.agreement.data import Rating, by_item


def fleiss_kappa(ratings: Iterable[Rating]) -> float:
    """Fleiss' kappa; NaN without items, with one rating per item, or when P_e = 1.

    Raises ValueError when items have different numbers of ratings.
    """
    items = [list(raters.values()) for raters in by_item(ratings).values()]
    if not items:
        return math.nan
    sizes = {len(values) for values in items}
    if len(sizes) > 1:
        raise ValueError(
            f"Fleiss' kappa needs the same number of ratings for every item, got {sorted(sizes)}"
        )
    n = sizes.pop()
    if n < 2:
        return math.nan
    totals: Counter = Counter()
    agreement = 0.0
    for values in items:
        counts = Counter(values)
        totals.update(counts)
        agreement += (sum(c * c for c in counts.values()) - n) / (n * (n - 1))
    p_bar = agreement / len(items)
    all_ratings = len(items) * n
    p_e = sum((count / all_ratings) ** 2 for count in totals.values())
    if p_e == 1:
        return math.nan
    return (p_bar - p_e) / (1 - p_e)
