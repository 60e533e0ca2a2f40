"""CollabLLM's document BLEU (Table 1, "Doc BLEU"; spec B2.3 `bleu_nltk_char`).

The paper scores the final document against the goal document with
`nltk.translate.bleu_score.sentence_bleu([reference], hypothesis)` on raw strings
[C Wuyxin/collabllm@review:collabllm/metrics/bleu_score.py]. nltk's n-grams of a string are
its characters, so that call is **character** BLEU-4: n-grams of 1 to 4 characters, clipped
counts against the one reference, uniform weights 0.25, no smoothing, and the brevity penalty
on lengths in characters. This module computes exactly that, without nltk at run time
(tests/metrics/test_chat_bleu.py checks it against nltk). It is not word BLEU (sacreBLEU's or
nltk's on token lists): those give other numbers, and the paper's are this one's.

Edge cases as nltk has them: no shared character gives 0; a higher order with no match makes
nltk warn and use the smallest positive float as that precision, so its score is below 1e-70,
where this returns 0.0 (what any table prints).
"""

from __future__ import annotations

import math
from collections import Counter

ORDERS = 4  # BLEU-4, uniform weights 1/4


def _ngrams(text: str, n: int) -> Counter:
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def bleu_nltk_char(reference: str, hypothesis: str) -> float:
    """Character BLEU-4 of `hypothesis` against `reference`, in [0, 1] (Table 1 shows x100)."""
    matches, totals = [], []
    for n in range(1, ORDERS + 1):
        counts, wanted = _ngrams(hypothesis, n), _ngrams(reference, n)
        matches.append(sum(min(count, wanted[gram]) for gram, count in counts.items()))
        totals.append(max(1, sum(counts.values())))  # nltk's denominator is at least 1
    if not all(matches):
        return 0.0
    # Summed in log space in order, as nltk does, so the float result is nltk's to the last bit.
    log_precision = math.fsum(math.log(m / t) / ORDERS for m, t in zip(matches, totals))
    return _brevity_penalty(len(reference), len(hypothesis)) * math.exp(log_precision)


def _brevity_penalty(reference_length: int, hypothesis_length: int) -> float:
    if hypothesis_length > reference_length:
        return 1.0
    return math.exp(1 - reference_length / hypothesis_length)  # hypothesis_length > 0: a match was found
