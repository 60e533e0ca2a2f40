"""Inter-rater agreement, one statistic per module, all with the same small interface.

Every function takes the ratings as `(item, rater, value)` triples (crowd-kit's task, worker,
label) and returns a float, NaN where the statistic's formula divides by zero (everyone used one
category, or too few ratings). Pure: no database, no Flask.

- `cohen`: Cohen's kappa for two raters over the items both rated, optionally weighted.
- `fleiss`: Fleiss' kappa for items that each have the same number of ratings (any raters).
- `krippendorff`: Krippendorff's alpha for any number of raters and missing ratings, with the
  nominal, ordinal or interval difference function.
"""

from __future__ import annotations

from study.review.agreement.cohen import cohen_kappa
from study.review.agreement.data import Rating, by_item
from study.review.agreement.fleiss import fleiss_kappa
from study.review.agreement.krippendorff import krippendorff_alpha

__all__ = ["Rating", "by_item", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]
