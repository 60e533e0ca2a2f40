"""The user study's derived numbers (CollabLLM §6, Fig. 7; spec B2.4): shares of high final
ratings and relative changes between assistants.

- `share_at_least`: the percent of conversations rated at least `threshold` on a 1-10 item. The
  paper's "good (8-9)" and "very good (9-10)" document shares (91.4 % and 56.9 % for CollabLLM)
  overlap as printed; 91.4 > 56.9 fits the shares rated >= 8 and >= 9, the reading taken here
  (spec B2.4 [I]). Its "highly engaging" share (63.8 % against 42.6 %) names no item or
  threshold: the interaction rating's >= 8 and >= 9 shares are both given.
- `relative_change`: 100 * (a - b) / b, an assistant's mean against a baseline's: the paper's
  "+17.6 %" satisfaction (not defined; read as the mean interaction rating) and its time
  "-10.4 % against Base", "-15.6 % against Proactive Base" ((T_base - T) / T_base, negated).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

THRESHOLDS = (8, 9)


def share_at_least(ratings: Iterable[float | None], threshold: float) -> float:
    """Percent of the given ratings that are >= threshold; NaN when none was given."""
    given = [r for r in ratings if r is not None]
    return 100 * sum(1 for r in given if r >= threshold) / len(given) if given else math.nan


def relative_change(value: float, baseline: float) -> float:
    """100 * (value - baseline) / baseline; NaN when either is missing or the baseline is 0."""
    if math.isnan(value) or math.isnan(baseline) or baseline == 0:
        return math.nan
    return 100 * (value - baseline) / baseline
