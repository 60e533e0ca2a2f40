"""What the model sees: L1's local window and L2's marked-up snapshot (MindCopilot App. H)."""

from __future__ import annotations

import pytest

from study.paradigms.proactive.context import HistoryError, HistoryItem, local_window, parse_history, snapshot
from study.paradigms.proactive.engine import clean, parse_output, strip_repetition
from study.paradigms.proactive.settings import ProactiveSettings


def test_snapshot_marks_accepted_rejected_deleted_and_added_text():
    # A scripted session (spec C10): the writer accepted " It was cold." and edited it to
    # " It was freezing.", rejected " She ran.", deleted " The end." and typed " Snow fell."
    doc = "The night came. It was freezing. Snow fell."
    history = [
        HistoryItem("accept", 15, length=len(" It was freezing.")),
        HistoryItem("reject", 32, text=" She ran."),
        HistoryItem("del", 32, text=" The end."),
        HistoryItem("add", 32, length=len(" Snow fell.")),
    ]
    assert snapshot(doc, history) == (
        "The night came.<accept> It was freezing.</accept><reject> She ran.</reject>"
        "<del> The end.</del><add> Snow fell.</add>"
    )


def test_snapshot_keeps_only_the_latest_items_and_never_crosses_tags():
    doc = "abcdefghij"
    history = [HistoryItem("add", 0, length=2), HistoryItem("accept", 2, length=6), HistoryItem("add", 4, length=4)]
    # The cap counts suggestion events and edits apart (spec A2.3): cap=1 keeps the accept and
    # the latest add, which lies inside it and is clipped rather than crossing its tags.
    assert snapshot(doc, history, cap=1) == "ab<accept>cdefgh</accept>ij"
    assert snapshot(doc, history) == "<add>ab</add><accept>cdefgh</accept>ij"


def test_history_items_from_the_browser_are_checked_with_the_field_named():
    assert parse_history([{"kind": "reject", "index": 3, "text": "x"}], 5)[0].text == "x"
    with pytest.raises(HistoryError, match=r"history\[0\].kind"):
        parse_history([{"kind": "keep", "index": 0, "length": 1}], 5)
    with pytest.raises(HistoryError, match=r"history\[1\].length must fit"):
        parse_history([{"kind": "add", "index": 0, "length": 1}, {"kind": "accept", "index": 4, "length": 3}], 5)
    with pytest.raises(HistoryError, match=r"history\[0\].index"):
        parse_history([{"kind": "del", "index": 9, "text": "gone"}], 5)


def test_local_window_is_the_end_of_the_text_cut_at_a_word():
    doc = "one two three four five six seven"
    assert local_window(doc, 100) == doc
    assert local_window(doc, 12) == "six seven"


def test_a_continuation_that_repeats_the_writers_words_loses_them():
    assert strip_repetition("The cat sat on the", " on the mat.") == " mat."
    assert strip_repetition("The cat sat", " quietly.") == " quietly."


def test_clean_keeps_one_sentence_and_a_separating_space():
    settings = ProactiveSettings()
    assert clean("The door opened", "and a man came in. He sat.", settings) == " and a man came in."
    assert clean("The door opened.", "   ", settings) == ""


def test_structured_answers_carry_a_rationale():
    assert parse_output('{"rationale": "keeps the metaphor", "continuation": " like rain."}') == (
        " like rain.", "keeps the metaphor")
    assert parse_output("plain text {not json") == ("plain text {not json", "")


def test_ghost_text_has_the_line_breaks_the_editor_can_hold():
    # The ghost text is appended to a <textarea>, which holds "\r\n" as "\n": the text issued
    # (and checked against the logged insert) must be what the writer's text then holds.
    for unit in ("sentence", "free"):
        settings = ProactiveSettings(unit=unit)
        assert "\r" not in clean("The end.", "\r\nA new paragraph.", settings)
        assert clean("The end.", "\r\nA new paragraph.", settings) == "\nA new paragraph."


def test_a_continuation_that_starts_with_the_end_of_the_writers_last_word_is_kept_whole():
    # "side" only ends the writer's word "outside": it repeats no word of theirs (HAR rule 1),
    # and cutting it would show "We sat outside by side, ...".
    assert strip_repetition("We sat outside", " side by side, we watched the sun.") == " side by side, we watched the sun."
    assert clean("She wanted to become", " come home early.", ProactiveSettings()) == " come home early."
    # A whole repeated word still goes.
    assert strip_repetition("It was a dark night", " night and the wind howled.") == " and the wind howled."
