"""Post-processing of raw model outputs into suggestions (CoAuthor App. A.3)."""

from __future__ import annotations

import json
import math
import random

import pysbd
import pytest

from study.suggest.postprocess import blocked_term, first_sentence, plain_first_sentence, postprocess, probability
from tests.conftest import COAUTHOR


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


def _pysbd_first(body: str) -> str:
    sentences = pysbd.Segmenter(language="en", clean=False).segment(body)
    return sentences[0].strip().split("\n")[0].rstrip() if sentences else ""


def _agreement(bodies) -> tuple[int, list]:
    """How many of `bodies` the plain-words shortcut answers, and where it differs from pysbd."""
    answered, differ = 0, []
    for body in bodies:
        plain = plain_first_sentence(body)
        if plain is not None:
            answered += 1
            if plain != _pysbd_first(body):
                differ.append((body, plain, _pysbd_first(body)))
    return answered, differ


def test_the_plain_words_shortcut_splits_the_coauthor_suggestions_as_pysbd_does() -> None:
    shown = []
    for path in sorted((COAUTHOR / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            shown += [s["original"] for s in json.loads(line).get("currentSuggestions") or [] if isinstance(s, dict) and s.get("original")]
    shown = list(dict.fromkeys(shown))
    # A suggestion and the next one together: a first sentence with more text after it, as an
    # output cut at max_tokens has; and each cut short, mid-sentence.
    bodies = [text.lstrip() for text in shown + [a + b for a, b in zip(shown, shown[1:])]]
    bodies += [body[:60] for body in bodies]
    answered, differ = _agreement(bodies)
    assert differ == []
    assert answered > len(bodies) / 3  # the shortcut is taken for most plain outputs


def test_the_plain_words_shortcut_leaves_abbreviations_initials_and_names_to_pysbd() -> None:
    rng = random.Random(17)
    words = ("the night was quiet and she walked home The He I I'm it's well-known "
             "mr dr st etc approx vs jan inc jr co al fig no A B x Smith U.S. e.g.").split()  # fmt: skip
    marks = (".", ".", "!", "?", ",", "", "", "", " ", "...", "?!", ";", ":", "\n", "'")

    def word() -> str:
        chosen = rng.choice(words)
        return (chosen.capitalize() if rng.random() < 0.25 else chosen) + rng.choice(marks)

    bodies = [" ".join(word() for _ in range(rng.randint(1, 12))) for _ in range(6000)]
    answered, differ = _agreement(bodies)
    assert differ == []
    assert answered > 300
    assert first_sentence(" I met Mr. Smith. He left") == " I met Mr. Smith."  # pysbd's answer


def test_windows_line_breaks_become_the_textareas_so_the_log_matches_the_screen() -> None:
    # The editor appends `original` to a <textarea>, which holds "\r\n" as "\n".
    [s] = postprocess(texts("\r\n\r\nThe next morning was cold. It rained."))
    assert s["original"] == "\n\nThe next morning was cold."


def test_a_first_sentence_longer_than_the_log_holds_is_cut_to_it() -> None:
    from study.paths import schemas_dir
    from study.suggest.postprocess import MAX_CHARS

    schema = json.loads((schemas_dir() / "event-batch.schema.json").read_text(encoding="utf-8"))
    held = schema["$defs"]["suggestion"]["properties"]
    assert MAX_CHARS == held["original"]["maxLength"] == held["trimmed"]["maxLength"]
    [kept] = postprocess([{"text": " and then" * 700}])
    assert kept["original"] == (" and then" * 700)[:MAX_CHARS].rstrip()
    assert kept["trimmed"] == kept["original"].strip()


def test_a_paragraph_unit_keeps_every_sentence_up_to_the_line_break() -> None:
    # Dhillon et al.'s next-paragraph suggestion; the default stays CoAuthor's first sentence.
    output = texts("\n\nThe next morning was cold. It rained. Nobody came.\n\nChapter two")
    [paragraph] = postprocess(output, unit="paragraph")
    assert paragraph["original"] == "\n\nThe next morning was cold. It rained. Nobody came."
    assert paragraph["trimmed"] == "The next morning was cold. It rained. Nobody came."
    [sentence] = postprocess(output)
    assert sentence["trimmed"] == "The next morning was cold."


def test_a_paragraph_longer_than_the_log_holds_is_cut_to_it() -> None:
    from study.suggest.postprocess import MAX_CHARS

    [kept] = postprocess([{"text": " It rained." * 600 + "\nMore."}], unit="paragraph")
    assert kept["original"] == (" It rained." * 600)[:MAX_CHARS].rstrip()


def test_a_paragraph_cut_by_max_tokens_keeps_its_whole_sentences_or_else_all_of_it() -> None:
    cut = " It rained. Nobody came to the"
    assert postprocess([{"text": cut, "finish_reason": "length"}], unit="paragraph")[0]["original"] == " It rained."
    # Ended by the model, or cut inside its first sentence: nothing else to show, kept whole.
    assert postprocess([{"text": cut, "finish_reason": "stop"}], unit="paragraph")[0]["original"] == cut
    [alone] = postprocess([{"text": " Nobody came to the", "finish_reason": "length"}], unit="paragraph")
    assert alone["original"] == " Nobody came to the"
    # A line break ended the paragraph before max_tokens ran out: it is whole.
    [ended] = postprocess([{"text": " It rained. Nobody came.\nThe next", "finish_reason": "length"}], unit="paragraph")
    assert ended["trimmed"] == "It rained. Nobody came."
    # A closing quotation after the full stop ends a sentence too.
    [quoted] = postprocess([{"text": ' He said, "Go." She', "finish_reason": "length"}], unit="paragraph")
    assert quoted["trimmed"] == 'He said, "Go."'


def test_a_quotation_closed_by_the_full_stop_stays_with_its_sentence() -> None:
    # As in CoAuthor's lists (11142ca3: ' Let me come in."'), not cut before the '"' as
    # pysbd splits it: the writer would take a quotation left open.
    [said] = postprocess(texts(' Let me come in." The wolf waited.'))
    assert said["original"] == ' Let me come in."'
    assert first_sentence(" It is my strongest tea.' He poured.") == " It is my strongest tea.'"
    assert first_sentence(' He said "go." Then he left.') == ' He said "go."'
