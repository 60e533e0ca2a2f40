"""Equality, mutuality, writer share and distinct-2 follow the paper's definitions."""

from __future__ import annotations

import math
import statistics

import pytest

from study.curation.blocks import block_counts
from study.curation.formats import read_session
from study.curation.metrics import (
    MUTUALITY_SETS,
    distinct_n,
    equality,
    final_words,
    mutuality,
    writer_share_final,
)
from study.curation.replay import Document, replay

from .conftest import SESSIONS, metadata_rows


def test_equality_is_one_minus_the_normalised_difference_of_insert_and_choose_blocks():
    assert equality({"insert": 5, "choose": 5}) == 1
    assert equality({"insert": 9, "choose": 0}) == 0
    assert equality({"insert": 3, "choose": 1, "delete": 40}) == pytest.approx(1 - 2 / 4)
    assert math.isnan(equality({"delete": 3}))


def test_equality_sets_are_configurable():
    assert equality({"insert": 1, "delete": 1, "choose": 2}, human={"insert", "delete"}) == 1


def test_mutuality_with_the_papers_printed_sets_counts_insert_on_both_sides():
    counts = {
        "insert": 4,
        "choose": 2,
        "reopen": 1,
        "navigate": 1,
        "dismiss": 1,
        "delete": 2,
        "query": 3,
    }
    # I = insert+choose+reopen+navigate = 8; A = dismiss+insert+delete = 7
    assert mutuality(counts) == pytest.approx(8 / 15)
    # the prose reading: I = query+choose+reopen+navigate = 7
    assert mutuality(counts, sets="prose") == pytest.approx(7 / 14)
    assert mutuality(counts, interaction={"choose"}, alone={"insert"}) == pytest.approx(2 / 6)
    assert set(MUTUALITY_SETS) == {"paper", "prose"}
    assert math.isnan(mutuality({}))


def test_writer_share_of_the_final_text_excludes_the_prompt():
    document = Document(text="Prompt\nab cd", authors="PPPPPPPWWWSS", event_index=3)
    assert writer_share_final(document) == pytest.approx(60.0)
    assert final_words(document) == 2
    assert math.isnan(writer_share_final(Document("P\n", "PP", 0)))


def test_distinct_2_is_unique_bigrams_over_tokens():
    assert distinct_n("the cat the cat", 2) == pytest.approx(2 / 4)  # {the cat, cat the}
    assert distinct_n("It's a dog's life.", 2) == pytest.approx(4 / 5)  # it's a dog's life .
    assert math.isnan(distinct_n("   "))


def test_chinese_and_japanese_text_counts_a_word_per_character_not_per_paragraph():
    # A whitespace split made each paragraph of Chinese one word and one distinct-2 token.
    document = Document(text="P\n蜜蜂很忙。It was cold.", authors="PP" + "W" * 17, event_index=1)
    assert final_words(document) == 7  # 蜜 蜂 很 忙 (。 is no word) It was cold.
    assert final_words(Document("P\n雪が降った。 Snow.", "PP" + "W" * 13, 1)) == 6
    assert final_words(Document("P\n눈이 왔다", "PP" + "W" * 5, 1)) == 2  # Korean spaces its words
    # 蜜 蜂 很 忙 ， 蜜 蜂 很 忙: 5 distinct bigrams over 9 tokens
    assert distinct_n("蜜蜂很忙，蜜蜂很忙", 2) == pytest.approx(5 / 9)


def test_fixture_means_are_in_the_range_of_the_papers_full_release_figures():
    # Table 3 and section 5.1.3 are full-release means (1,445 sessions); 31 sessions only
    # roughly agree: equality ~0.22-0.30, mutuality 0.38-0.49, writers' share 72.6%, 367 words.
    rows = {row["session_id"]: row for row in metadata_rows()}
    equalities, mutualities, shares, words = [], [], [], []
    for session_id in rows:
        events = read_session(SESSIONS / f"{session_id}.jsonl").events
        counts, document = block_counts(events), replay(events)
        equalities.append(equality(counts))
        mutualities.append(mutuality(counts))
        shares.append(writer_share_final(document))
        words.append(final_words(document))
    assert 0.2 <= statistics.mean(equalities) <= 0.5
    assert 0.35 <= statistics.mean(mutualities) <= 0.5
    assert 50 <= statistics.mean(shares) <= 80
    assert 200 <= statistics.mean(words) <= 420
