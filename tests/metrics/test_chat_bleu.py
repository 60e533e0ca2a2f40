"""CollabLLM's document BLEU (study.paradigms.chat.metrics.bleu): exactly what the paper's code
computes, nltk's `sentence_bleu([reference], hypothesis)` on raw strings (spec B2.3, C10)."""

from __future__ import annotations

import warnings

import pytest
from nltk.translate.bleu_score import sentence_bleu

from study.paradigms.chat.metrics.bleu import bleu_nltk_char

GOAL = (
    "The lighthouse keeper counted ships for forty years. Each night she wrote their names in a "
    "blue ledger, and each morning she walked the cliff path to the village to post her letters."
)
FIXTURES = [
    (GOAL, GOAL),  # identical: 1
    (GOAL, GOAL[:60]),  # a prefix: the brevity penalty on characters
    (GOAL, GOAL + " She never missed a night, not even in the storm of 1953."),  # longer: no penalty
    (GOAL, "For forty years the keeper of the lighthouse counted the ships, writing names in a ledger."),
    (GOAL, "Ein Leuchtturmwärter zählte vierzig Jahre lang Schiffe."),  # little in common, umlauts
    ("Café au lait, s'il vous plaît.", "Cafe au lait s'il vous plait"),
    ("A short goal.", "A short goal, and then some more words that the assistant added at length."),
]


@pytest.mark.parametrize(("reference", "hypothesis"), FIXTURES)
def test_character_bleu_is_nltks_sentence_bleu_on_strings(reference, hypothesis):
    expected = sentence_bleu([reference], hypothesis)
    assert 0 < expected <= 1
    assert bleu_nltk_char(reference, hypothesis) == expected


@pytest.mark.parametrize(("reference", "hypothesis"), [(GOAL, "xyz"), (GOAL, "q!"), (GOAL, ""), ("", "abc"), ("abc", "")])
def test_no_match_at_some_order_scores_zero_as_nltk_does_with_its_warning(reference, hypothesis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk's "The hypothesis contains 0 counts of n-gram overlaps"
        expected = sentence_bleu([reference], hypothesis)
    assert expected < 1e-70  # nltk's stand-in for 0 is the smallest positive float, to the 1/4 power
    assert bleu_nltk_char(reference, hypothesis) == 0.0


def test_word_level_bleu_is_not_the_papers():
    # The guard of spec C10: were someone to "fix" the BLEU to words, Table 1's numbers would
    # change. Words share no 4-gram here, characters share many.
    reference, hypothesis = FIXTURES[3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        words = sentence_bleu([reference.split()], hypothesis.split())
    assert words < 1e-70
    assert bleu_nltk_char(reference, hypothesis) > 0.1
    assert abs(bleu_nltk_char(reference, hypothesis) - words) > 0.1
