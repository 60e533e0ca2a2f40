"""Krippendorff's alpha with its bootstrap interval: the same alpha as the reviewers' function,
an interval around it, and none with too few items."""

from __future__ import annotations

import math
import random

import pytest

from study.review.agreement import krippendorff_alpha
from study.review.agreement.interval import alpha_with_interval


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_reviewers_function_and_its_interval_holds_it(level):
    rng = random.Random(7)
    ratings = [(item, judge, min(5, max(1, item % 5 + 1 + rng.choice([-1, 0, 0, 1]))))
               for item in range(150) for judge in range(3)]  # fmt: skip
    found = alpha_with_interval(ratings, level, resamples=300)
    assert found.alpha == pytest.approx(krippendorff_alpha(ratings, level))
    assert found.low < found.alpha < found.high
    assert found.items == 150 and found.ratings == 450


def test_perfect_agreement_has_no_spread_and_one_item_has_no_interval():
    agreeing = [(item, judge, item % 3 + 1) for item in range(30) for judge in range(2)]
    found = alpha_with_interval(agreeing, "ordinal", resamples=200)
    assert found.alpha == 1.0 and found.low == 1.0 and found.high == 1.0
    single = alpha_with_interval([("a", 1, 2), ("a", 2, 3)], "interval")
    assert math.isnan(single.low)
