"""Per-session metrics of the CoAuthor paper (Lee, Liang & Yang, CHI 2022), as pure functions.

Each takes what it needs from a parsed session (event-block counts from
`study.curation.blocks.block_counts`, or the final `Document` from `study.curation.replay`)
and returns a number; NaN where the paper's formula divides by zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping

from study.curation.replay import EMBED, SUGGESTION, WRITER, Document

# Section 5.1.3: human- and machine-generated event blocks.
HUMAN_BLOCKS = frozenset({"insert"})
MACHINE_BLOCKS = frozenset({"choose"})

# Section 5.1.3 prints I = {insert, choose, reopen, navigate} and A = {dismiss, insert, delete},
# so `insert` is in both sets, while the prose defines mutuality as "querying multiple times,
# choosing suggestions, reopening suggestions, and navigating through suggestions", i.e. with
# `query` where the formula has `insert`. Both readings are offered; "paper" (the sets as
# printed) is the default because its values fall in the paper's range (mutuality 0.38-0.49
# per condition, Figure 9): on the 31 fixtures it averages 0.43, the prose reading 0.25.
MUTUALITY_SETS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "paper": (
        frozenset({"insert", "choose", "reopen", "navigate"}),
        frozenset({"dismiss", "insert", "delete"}),
    ),
    "prose": (
        frozenset({"query", "choose", "reopen", "navigate"}),
        frozenset({"dismiss", "insert", "delete"}),
    ),
}
DEFAULT_MUTUALITY = "paper"


def _count(counts: Mapping[str, int], names: Collection[str]) -> int:
    return sum(counts.get(name, 0) for name in names)


def equality(
    counts: Mapping[str, int],
    human: Collection[str] = HUMAN_BLOCKS,
    machine: Collection[str] = MACHINE_BLOCKS,
) -> float:
    """How evenly writer and GPT-3 took turns (section 5.1.3, after Storch).

    equality = 1 - |(sum[e in H] - sum[e in M]) / (sum[e in H] + sum[e in M])| over the
    session's event blocks, with H = {insert} and M = {choose}. 1 is a perfect division of
    turns, 0 no turn change (written entirely by one side). NaN when the session has neither.
    """
    h, m = _count(counts, human), _count(counts, machine)
    if h + m == 0:
        return math.nan
    return 1 - abs((h - m) / (h + m))


def mutuality(
    counts: Mapping[str, int],
    interaction: Collection[str] | None = None,
    alone: Collection[str] | None = None,
    *,
    sets: str = DEFAULT_MUTUALITY,
) -> float:
    """The level of interaction a writer has with GPT-3 (section 5.1.3, after Storch).

    mutuality = sum[e in I] / (sum[e in I] + sum[e in A]) over event blocks, where I are
    human-machine interaction blocks and A writing-alone blocks; a block in both sets counts in
    both sums. `sets` picks a reading from MUTUALITY_SETS; `interaction`/`alone` override it.
    1 means the writer interacted with GPT-3 the entire time, 0 never. NaN without blocks.
    """
    default_interaction, default_alone = MUTUALITY_SETS[sets]
    i = _count(counts, default_interaction if interaction is None else interaction)
    a = _count(counts, default_alone if alone is None else alone)
    if i + a == 0:
        return math.nan
    return i / (i + a)


def writer_share_final(document: Document) -> float:
    """Percentage of the final text (prompt excluded) written by the writer (Table 3).

    Table 3's "written by writers (%)": characters inserted by the writer that survive in the
    final text, over all surviving non-prompt characters (writer + accepted suggestions),
    times 100 (a surviving embed, such as a pasted image, is one character of its inserter). Not
    the released `written_by_human`, which counts every inserted character. NaN when nothing
    beyond the prompt survives.
    """
    writer, suggestion = document.count(WRITER), document.count(SUGGESTION)
    if writer + suggestion == 0:
        return math.nan
    return 100 * writer / (writer + suggestion)


def final_words(document: Document) -> int:
    """Words of the final text without the prompt (Table 3 "length", `count_words`); an embed
    (a pasted image) separates words and is none."""
    return count_words(document.without_prompt().replace(EMBED, " "))


# Chinese and Japanese write no space between words: each ideograph or kana is a word, as word
# processors count them (a whitespace split made a paragraph of Chinese one word). Their
# punctuation and full-width marks are no word. Korean spaces its words and is split as English.
_UNSPACED = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = re.compile(f"[{_UNSPACED}]|[^\\s{_UNSPACED}]+")
_MARKS = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_UNSPACED_MARKS = re.compile(f"[{_MARKS}]+")
# Text with neither is counted and split as before them, by the faster means (curate's one pass).
_ANY_UNSPACED = re.compile(f"[{_UNSPACED}{_MARKS}]")


def count_words(text: str) -> int:
    """Words: runs of non-space characters (a whitespace split, as the release's word counts),
    and each Chinese or Japanese character on its own."""
    if not _ANY_UNSPACED.search(text):  # most texts: the split, without a pattern per word
        return len(text.split())
    return sum(1 for word in _WORD.findall(text) if not _UNSPACED_MARKS.fullmatch(word))


# A word (with inner apostrophes), a Chinese or Japanese character, or a punctuation mark; an
# embed (EMBED) is no token.
_TOKEN = re.compile(f"[{_UNSPACED}]|(?:(?![{_UNSPACED}])\\w)+(?:'\\w+)*|[^\\w\\s\\ufffc]")
_SPACED_TOKEN = re.compile(r"\w+(?:'\w+)*|[^\w\s\ufffc]")  # the same for text without them


def tokens(text: str) -> list[str]:
    """Lower-cased words (with inner apostrophes), Chinese and Japanese characters one by one,
    and punctuation marks."""
    return (_TOKEN if _ANY_UNSPACED.search(text) else _SPACED_TOKEN).findall(text.lower())


def distinct_n(text: str, n: int = 2) -> float:
    """distinct-n (Li et al. 2016, the paper's [35]): unique n-grams / number of tokens.

    Section 5.1.1: "the number of unique bigrams scaled by total number of generated words".
    The paper averages it over sentences of the final text; the per-session statistic here is
    computed over the whole final text without the prompt. NaN for a text without tokens.
    """
    words = tokens(text)
    if not words:
        return math.nan
    grams = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    return len(grams) / len(words)
