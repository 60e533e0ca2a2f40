"""Character and word edit distances between a suggestion and its final text.

MindCopilot Table 2's Levenshtein baseline is character-level with unit costs (Fig. 3's axis
0-400); the word-level distance counts whole words inserted, deleted or substituted, a cheap
proxy between characters and KED's itemised edits. Both use rapidfuzz.
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Levenshtein

_WORD = re.compile(r"\w+|[^\w\s]")


def char_edit_distance(suggestion: str, final: str) -> int:
    return Levenshtein.distance(suggestion, final)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def word_edit_distance(suggestion: str, final: str) -> int:
    """Levenshtein distance over word and punctuation tokens."""
    return Levenshtein.distance(words(suggestion), words(final))
