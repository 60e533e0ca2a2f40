"""Inter-rater agreement of the reviewers, as the researcher sees it.

Which statistic applies to which ratings:
  - Krippendorff's alpha (at the study's `agreement_level`, ordinal by default, and interval
    for comparison): every submission with at least two ratings, any reviewers, missing
    ratings allowed;
  - Fleiss' kappa: the submissions with exactly `ratings_per_submission` ratings (the formula
    needs the same number per item), unweighted, so it treats scores as unordered;
  - Cohen's kappa, unweighted and quadratic-weighted: every pair of reviewers who rated at
    least two submissions in common.
Disqualified submissions are left out: nobody rated them. Adjudications are decisions, not
ratings, and are left out too.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field

from study.review.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from study.review.agreement.data import Rating, by_item

MIN_SHARED = 2


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    shared: int
    kappa: float
    weighted: float


@dataclass
class Agreement:
    level: str
    ratings: int
    items: int  # submissions with at least two ratings
    alpha: float
    alpha_interval: float
    fleiss_items: int
    fleiss: float
    pairs: list[Pair] = field(default_factory=list)
    distribution: dict[int, int] = field(default_factory=dict)


def agreement(
    ratings: list[Rating], *, level: str, ratings_per_submission: int, scores: tuple[int, ...]
) -> Agreement:
    """The statistics over (submission, reviewer, score) triples. Pure."""
    items = by_item(ratings)
    full = [
        (i, r, v)
        for i, rs in items.items()
        if len(rs) == ratings_per_submission
        for r, v in rs.items()
    ]
    raters = sorted({rater for _, rater, _ in ratings})
    pairs = []
    for a, b in itertools.combinations(raters, 2):
        shared = sum(a in rs and b in rs for rs in items.values())
        if shared >= MIN_SHARED:
            pairs.append(
                Pair(
                    a,
                    b,
                    shared,
                    cohen_kappa(ratings, a, b),
                    cohen_kappa(ratings, a, b, weights="quadratic", categories=scores),
                )
            )
    return Agreement(
        level=level,
        ratings=len(ratings),
        items=sum(len(rs) >= 2 for rs in items.values()),
        alpha=krippendorff_alpha(ratings, level),
        alpha_interval=krippendorff_alpha(ratings, "interval"),
        fleiss_items=len({i for i, _, _ in full}),
        fleiss=fleiss_kappa(full) if ratings_per_submission >= 2 else math.nan,
        pairs=pairs,
        distribution=dict(sorted(Counter(v for _, _, v in ratings).items())),
    )


def show(value: float) -> str:
    """A statistic for the page: three decimals, or a dash where it is undefined."""
    return "—" if math.isnan(value) else f"{value:.3f}"
