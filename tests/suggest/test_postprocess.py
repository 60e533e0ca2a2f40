"""Post-processing of raw model outputs into suggestions (CoAuthor App. A.3)."""

from __future__ import annotations

import math

import pytest

from study.suggest.postprocess import blocked_term, first_sentence, postprocess, probability


def texts(*raw: str) -> list[dict]:
    return [{"text": t} for t in raw]


def test_only_the_first_sentence_is_kept() -> None:
    [s] = postprocess(texts(" He opened the door. The room was dark. Nobody"))
    assert s["original"] == " He opened the door."
    assert s["trimmed"] == "He opened the door."


def test_leading_newlines_stay_in_original_so_the_editor_can_append_it() -> None:
    [s] = postprocess(texts("\n\nThe next morning was cold. It rained."))
    assert s["original"] == "\n\nThe next morning was cold."
    assert s["trimmed"] == "The next morning was cold."


def test_abbreviations_do_not_end_the_sentence() -> None:
    assert first_sentence(" Mr. Smith met Dr. Jones at 5 p.m. on Monday. Later") == (
        " Mr. Smith met Dr. Jones at 5 p.m. on Monday."
    )


def test_an_unfinished_sentence_is_kept_whole_up_to_the_line_break() -> None:
    assert first_sentence(" and then she ran") == " and then she ran"
    assert first_sentence(" Chapter two\nShe woke up.") == " Chapter two"


def test_empty_and_blank_outputs_are_dropped() -> None:
    assert postprocess(texts("", "   ", "\n\n", " . ")) == [
        {"index": 0, "original": " .", "trimmed": ".", "probability": None}
    ]


def test_duplicates_within_the_batch_are_dropped_ignoring_case_and_spaces() -> None:
    kept = postprocess(texts(" She left.", "\nshe left. Then", " She LEFT. ", " He stayed."))
    assert [s["trimmed"] for s in kept] == ["She left.", "He stayed."]


def test_suggestions_already_on_screen_are_not_shown_again() -> None:
    kept = postprocess(texts(" She left.", " He stayed."), on_screen=["  she left.  "])
    assert [s["trimmed"] for s in kept] == ["He stayed."]


def test_indices_count_the_kept_suggestions_in_model_order() -> None:
    kept = postprocess(texts(" A one.", "", " A one.", " A two.", " A three."))
    assert [(s["index"], s["trimmed"]) for s in kept] == [(0, "A one."), (1, "A two."), (2, "A three.")]


def test_blocklist_phrases_match_across_case_and_whitespace() -> None:
    blocklist = ("shut up", "damn")
    kept = postprocess(
        texts(" Just SHUT  UP, he said.", " Damn it.", " They shut the door up there."),
        blocklist=blocklist,
    )
    assert [s["trimmed"] for s in kept] == ["They shut the door up there."]


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("The class was quiet.", None),
        ("He passed the exam.", None),
        ("What an ass!", "ass"),
        ("Ass.", "Ass"),
        ("A grass-fed cow.", None),
    ],
)
def test_blocklist_respects_word_boundaries(text: str, blocked: str | None) -> None:
    assert blocked_term(text, ["ass"]) == blocked


def test_blocklist_only_looks_at_the_sentence_that_is_shown() -> None:
    # The second sentence is cut off before it is shown, so it cannot offend anyone.
    kept = postprocess(texts(" It was fine. Damn."), blocklist=["damn"])
    assert [s["trimmed"] for s in kept] == ["It was fine."]


def test_probability_is_exp_of_the_summed_token_logprobs() -> None:
    [s] = postprocess([{"text": " Yes.", "token_logprobs": [-0.5, -0.25, -0.25]}])
    assert s["probability"] == pytest.approx(math.exp(-1.0))
    [s] = postprocess([{"text": " Yes.", "logprob_sum": -2.0}])
    assert s["probability"] == pytest.approx(math.exp(-2.0))


def test_probability_is_none_without_logprobs() -> None:
    assert probability(None) is None
    assert postprocess(texts(" Yes."))[0]["probability"] is None
