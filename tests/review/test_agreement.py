"""Agreement statistics against textbook examples and hand computations."""

from __future__ import annotations

import math

import pytest

from study.review.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha


def triples_from_columns(columns: dict[str, list]) -> list[tuple]:
    """Reliability data as printed (one row per observer, None = missing) -> triples."""
    return [
        (unit, observer, value)
        for observer, values in columns.items()
        for unit, value in enumerate(values)
        if value is not None
    ]


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, values 1-5 with missing data. The paper gives alpha = 0.743 (nominal),
# 0.815 (ordinal) and 0.849 (interval).
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_matches_krippendorffs_worked_example(level, expected):
    assert krippendorff_alpha(triples_from_columns(KRIPPENDORFF_2011), level) == pytest.approx(
        expected, abs=0.0005
    )


def test_krippendorff_alpha_nominal_by_hand():
    # Two units rated (1, 1) and (1, 2): o_11 = 2, o_12 = o_21 = 1, n_1 = 3, n_2 = 1, n = 4.
    # D_o = 2/4, D_e = (3*1 + 1*3) / (4*3) = 1/2, alpha = 1 - 1 = 0.
    ratings = [(0, "a", 1), (0, "b", 1), (1, "a", 1), (1, "b", 2)]
    assert krippendorff_alpha(ratings, "nominal") == pytest.approx(0.0)


def test_krippendorff_alpha_ignores_units_rated_once_and_is_undefined_without_variation():
    assert krippendorff_alpha([(0, "a", 3), (1, "a", 4), (1, "b", 4)]) != krippendorff_alpha(
        [(0, "a", 3)]
    )
    assert math.isnan(krippendorff_alpha([(0, "a", 3)]))  # nothing pairable
    assert math.isnan(krippendorff_alpha([(0, "a", 4), (0, "b", 4), (1, "a", 4), (1, "b", 4)]))


def test_krippendorff_alpha_is_one_for_perfect_agreement():
    ratings = [(u, r, v) for u, v in enumerate([1, 3, 5, 4]) for r in "abc"]
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(ratings, level) == pytest.approx(1.0)


def test_cohen_kappa_matches_the_textbook_two_by_two_example():
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15. p_o = 0.7, p_e = 0.5.
    ratings = []
    item = 0
    for a, b, count in ((1, 1, 20), (1, 0, 5), (0, 1, 10), (0, 0, 15)):
        for _ in range(count):
            ratings += [(item, "a", a), (item, "b", b)]
            item += 1
    assert cohen_kappa(ratings, "a", "b") == pytest.approx(0.4)


def test_weighted_cohen_kappa_by_hand():
    # Three items on a 1-3 scale: (1, 1), (2, 3), (3, 3). Quadratic weights w = ((i-j)/2)^2.
    # Observed disagreement: (1/3) * (1/2)^2 = 1/12. Marginals a: 1/3 each; b: 1/3, 0, 2/3.
    # Expected: sum_i sum_j a_i b_j w_ij = (1/3)[(0 + 0 + 2/3*1) + (1/3*1/4 + 2/3*1/4) + (1/3*1 + 0)]
    #         = (1/3)(2/3 + 1/4 + 1/3) = 5/12. kappa_w = 1 - (1/12)/(5/12) = 0.8.
    ratings = [(0, "a", 1), (0, "b", 1), (1, "a", 2), (1, "b", 3), (2, "a", 3), (2, "b", 3)]
    assert cohen_kappa(ratings, "a", "b", weights="quadratic") == pytest.approx(0.8)
    # Linear weights |i-j|/2: observed 1/6; expected (1/3)(2/3 + 1/2 + 1/3) = 1/2; kappa 2/3.
    assert cohen_kappa(ratings, "a", "b", weights="linear") == pytest.approx(2 / 3)


def test_cohen_kappa_uses_only_items_both_rated_and_the_whole_scale_for_weights():
    ratings = [(0, "a", 1), (0, "b", 1), (1, "a", 2), (1, "b", 2), (2, "a", 5)]
    assert cohen_kappa(ratings, "a", "b") == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(ratings, "a", "c"))
    # Scores 1, 4 and 5 used: by rank 1-vs-4 is as far as 4-vs-5; on the rubric's 1-5 scale it
    # is three times as far, which the weights see only when given the whole scale.
    gappy = [(0, "a", 1), (0, "b", 4), (1, "a", 4), (1, "b", 4), (2, "a", 5), (2, "b", 5),
             (3, "a", 1), (3, "b", 1)]  # fmt: skip
    by_rank = cohen_kappa(gappy, "a", "b", "linear")
    on_scale = cohen_kappa(gappy, "a", "b", "linear", categories=range(1, 6))
    # By hand (linear): by rank, w(1,4) = 1/2, observed 1/8, expected 7/16, kappa 5/7; on the
    # scale, w(1,4) = 3/4, w(1,5) = 1, w(4,5) = 1/4: observed 3/16, expected 15/32, kappa 0.6.
    assert (by_rank, on_scale) == (pytest.approx(5 / 7), pytest.approx(0.6))
    narrow = gappy
    with pytest.raises(ValueError):
        cohen_kappa(narrow, "a", "b", weights="cubic")


def test_cohen_kappa_is_undefined_when_chance_agreement_is_certain():
    assert math.isnan(cohen_kappa([(0, "a", 4), (0, "b", 4), (1, "a", 4), (1, "b", 4)], "a", "b"))


# Fleiss (1971) as worked in the textbook example (Wikipedia, "Fleiss' kappa"): 10 subjects,
# 14 raters each, 5 categories: P = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def test_fleiss_kappa_matches_the_textbook_example():
    ratings = []
    for subject, row in enumerate(FLEISS_TABLE):
        rater = 0
        for category, count in enumerate(row, start=1):
            for _ in range(count):
                ratings.append((subject, rater, category))
                rater += 1
    assert fleiss_kappa(ratings) == pytest.approx(0.210, abs=0.0005)


def test_fleiss_kappa_by_hand_and_its_limits():
    # Two items, two ratings each: (4, 4) and (4, 5). P_1 = 1, P_2 = 0, P = 1/2;
    # p_4 = 3/4, p_5 = 1/4, P_e = 10/16; kappa = (1/2 - 5/8) / (3/8) = -1/3.
    ratings = [(0, "a", 4), (0, "b", 4), (1, "a", 4), (1, "c", 5)]
    assert fleiss_kappa(ratings) == pytest.approx(-1 / 3)
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_kappa(ratings + [(2, "a", 3)])
    assert math.isnan(fleiss_kappa([]))
    assert math.isnan(fleiss_kappa([(0, "a", 4), (1, "a", 5)]))  # one rating per item
