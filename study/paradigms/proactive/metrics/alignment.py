"""How well an acceptance judge agrees with experts (MindCopilot §4.1, Table 1).

The paper validates HAR, and its layer ablations, on 1.2K expert-labelled items (context,
continuation, reference, expert accept/reject): the **alignment rate** is the percent of items
whose judge verdict equals the expert's, and **Cohen's kappa** is computed between the judge's
and the experts' labels. Its kappas are low (0.01-0.27) where alignment reaches 69-82 %, which a
skewed label distribution explains (live acceptance is 10-28 %), so the class balance, the
share of accepts among the experts' and the judge's labels, is reported beside kappa (spec A3.1).
An item the judge answered unreadably (`None`) is left out and counted, as in `har_rate`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from study.review.agreement.cohen import cohen_kappa


@dataclass(frozen=True)
class Alignment:
    percent: float  # judge == expert, of the items with a verdict; NaN when none
    kappa: float  # Cohen's kappa; NaN when undefined (no item, or both always said the same)
    n: int
    invalid: int
    expert_accepts: float  # percent of the items the experts accepted
    judge_accepts: float


def alignment_and_kappa(judge: Iterable[bool | None], expert: Iterable[bool]) -> Alignment:
    """`judge` and `expert`: verdicts per item, in the same order (True: accept)."""
    pairs = list(zip(judge, expert, strict=True))
    valid = [(j, e) for j, e in pairs if j is not None]
    n = len(valid)
    if not n:
        return Alignment(math.nan, math.nan, 0, len(pairs), math.nan, math.nan)
    ratings = [(i, rater, int(verdict)) for i, pair in enumerate(valid) for rater, verdict in zip("je", pair)]
    return Alignment(
        percent=100 * sum(j == e for j, e in valid) / n,
        kappa=cohen_kappa(ratings, "j", "e"),
        n=n,
        invalid=len(pairs) - n,
        expert_accepts=100 * sum(e for _, e in valid) / n,
        judge_accepts=100 * sum(j for j, _ in valid) / n,
    )
