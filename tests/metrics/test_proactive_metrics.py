"""MindCopilot's metrics: HAR pooling, the judges over HTTP, KED, distances, acceptance."""

from __future__ import annotations

import math
import random

import pytest

from study.lm.judge_backend import JudgeBackend
from study.lm.server import serve_in_thread
from study.metrics.judges.client import OpenAIJudge
from study.metrics.judges.deterministic import DeterministicJudge
from study.paradigms.proactive.metrics.acceptance import acceptance_rate
from study.paradigms.proactive.metrics.correlate import correlate
from study.paradigms.proactive.metrics.edit_distance import char_edit_distance, word_edit_distance
from study.paradigms.proactive.metrics.har import HarItem, har
from study.paradigms.proactive.metrics.har_rate import Rate, har_rate, pooled
from study.paradigms.proactive.metrics.ked import WEIGHTS, ked, ked_mean
from study.paradigms.proactive.metrics.ked_calibrate import Instance, ked_calibrate


@pytest.fixture(scope="module")
def judge_url():
    base_url, stop = serve_in_thread(JudgeBackend())
    yield base_url
    stop()


@pytest.fixture
def judge(judge_url, tmp_path):
    return OpenAIJudge(base_url=judge_url, model="deterministic-judge", cache_dir=tmp_path / "cache")


# Spec A6 [D]: accepted queries implied by Table 11 (Scientific, Creative) and Table 4's HAR.
TABLE4 = {
    ("GPT-5.1", "L1"): (210, 87, 17.59, 21.47, 12.25),
    ("GPT-5.1", "L2"): (231, 100, 19.61, 23.62, 14.08),
    ("Gemini-2.5-Pro", "L2"): (187, 115, 17.89, 19.12, 16.20),
    ("Gemini-2.5-Flash", "L1"): (145, 81, 13.39, 14.83, 11.41),
    ("Gemini-2.5-Flash", "L2"): (196, 75, 16.05, 20.04, 10.56),
    ("DeepSeek-V3.2", "L1"): (80, 38, 6.99, 8.18, 5.35),
    ("DeepSeek-V3.2", "L2"): (126, 49, 10.37, 12.88, 6.90),
}


@pytest.mark.parametrize("row", sorted(TABLE4))
def test_har_is_pooled_over_queries_and_reproduces_table_4(row):
    science, creative, overall, science_pct, creative_pct = TABLE4[row]
    s = har_rate([True] * science + [False] * (978 - science))
    c = har_rate([True] * creative + [False] * (710 - creative))
    assert (round(s.percent, 2), round(c.percent, 2)) == (science_pct, creative_pct)
    assert round(pooled([s, c]).percent, 2) == overall
    # The mean of the two rates is not HAR: it would not reproduce the table.
    assert round((s.percent + c.percent) / 2, 2) != overall


def test_the_har_prompt_has_app_hs_fields_in_order_and_the_layers_rules():
    """App. H: <USER_INPUT>, <REFERENCE>, <COMPLETION>, then a boxed {accept, triggered_condition,
    reasoning}; Table 1's ablations ask rules 1-5, 1-11 or all 17 (App. B.5's three layers)."""
    from study.paradigms.proactive.metrics.har import messages

    item = HarItem("The lab was cold", " and quiet.", " and dark.")
    for layers, last in (("L1", 5), ("L1+L2", 11), ("full", 17)):
        (message,) = messages(item, layers)
        text = message["content"]
        fields = [text.index(f) for f in ('<USER_INPUT>: "The lab was cold"', '<REFERENCE>: " and quiet."',
                                          '<COMPLETION>: " and dark."', '\\boxed{{"accept"')]  # fmt: skip
        assert fields == sorted(fields)
        rules = [int(line.split(".")[0]) for line in text.splitlines() if line[:1].isdigit()]
        assert rules == list(range(1, last + 1)), layers
        assert ("If none of these rules fires -> accept." in text) == (last < 17)  # reading (a): a filter


def test_invalid_verdicts_leave_the_denominator_and_an_empty_rate_is_nan():
    assert har_rate([True, False, None]) == Rate(50.0, 1, 2, 1)
    assert math.isnan(har_rate([]).percent)
    rate = har_rate([True, False] * 50, bootstrap=200)
    assert rate.ci[0] < 50 < rate.ci[1]


def test_the_har_judge_over_http_applies_the_checklist_in_order(judge):
    context = "The experiment ran at room temperature for three hours and"
    repeat = har(HarItem(context, " the samples were dried.", " for three hours and the samples dried."), judge)
    assert repeat.accept is False and repeat.rule.startswith("1.")
    restart = har(HarItem(context, " the samples were dried.", " The experiment ran at room temperature again."), judge)
    assert restart.accept is False and restart.rule.startswith("1.")
    overlap = har(HarItem(context, " the samples were dried overnight.", " the samples were dried overnight."), judge)
    assert overlap.accept is True and overlap.rule.startswith("12.")
    off_topic = HarItem(context, " the samples were dried.", " giraffes enjoy tall acacia leaves.")
    assert har(off_topic, judge).accept is False
    assert har(off_topic, judge, layers="L1").accept is True  # a pure filter of rules 1-5


def test_judgements_are_cached_on_disk(judge, tmp_path):
    item = HarItem("It rained", " all day.", " all day long.")
    first = har(item, judge)
    calls = judge.calls
    again = OpenAIJudge(base_url="http://127.0.0.1:9/v1", model="deterministic-judge", cache_dir=tmp_path / "cache")
    assert har(item, again) == first  # answered from the cache: the dead endpoint is never asked
    assert again.calls == 0 and calls == 1
    assert list((tmp_path / "cache").rglob("*.json"))


def test_an_unreadable_judge_gives_an_invalid_verdict_not_a_reject():
    class Mumbling:
        def ask(self, version, messages):
            return "I think it is fine"

    verdict = har(HarItem("a", "b", "c"), Mumbling())
    assert verdict.invalid and har_rate([verdict.accept]).invalid == 1


def test_ked_costs_knowledge_edits_more_than_surface_edits_of_the_same_size(judge):
    # MindCopilot App. C, Case 8: a value-with-unit substitution is a complex entity edit.
    unit = ked("The cell was kept at 273 K.", "The cell was kept at 298 K.", judge)
    typo = ked("The cell was kept at home.", "The cell was kept at hme.", judge)
    assert char_edit_distance("273", "298") >= char_edit_distance("home", "hme")
    assert unit.value == WEIGHTS["complex_entity"] and typo.value == WEIGHTS["lexical"]
    claim = ked("Our model is competitive.", "Our model is state-of-the-art.", judge)
    assert claim.value > typo.value and claim.counts["claim_strength"] == 1
    assert ked(" Same text.", "Same   text. ", judge).value == 0.0


def test_ked_weights_are_configurable_and_the_mean_of_nothing_is_nan():
    judge = DeterministicJudge()
    heavy = {**WEIGHTS, "complex_entity": 10.0}
    assert ked("at 273 K", "at 298 K", judge, weights=heavy).value == 10.0
    assert math.isnan(ked_mean([]))
    assert ked_mean([2.0, None, 4.0]) == 3.0


def test_edit_distances_count_characters_and_words():
    assert char_edit_distance("kitten", "sitting") == 3
    assert word_edit_distance("the cat sat.", "the dog sat down.") == 2


def test_acceptance_rate_is_reported_per_writer_and_pooled():
    outcomes = [("a", "accepted"), ("a", "rejected"), ("a", "rejected"), ("a", "rejected"),
                ("b", "accepted_modified"), ("b", "stale"), ("c", "partial"), ("c", "ignored")]
    rate = acceptance_rate(outcomes)
    assert (rate.shown, rate.accepted, rate.sessions) == (7, 3, 3)
    assert rate.micro == pytest.approx(300 / 7)
    assert rate.macro == pytest.approx((25 + 100 + 50) / 3)


def test_calibration_recovers_the_weights_that_explain_durations():
    rng = random.Random(1)
    instances = []
    for _ in range(200):
        counts = {"complex_entity": rng.randint(0, 3), "surface": rng.randint(0, 5), "relation": rng.randint(0, 2)}
        duration = 6 * counts["complex_entity"] + 1 * counts["surface"] + 3 * counts["relation"] + rng.random()
        instances.append(Instance(counts, duration, levenshtein=rng.randint(0, 50)))
    result = ked_calibrate(instances)
    assert result.weights["complex_entity"] == pytest.approx(6, abs=0.5)
    assert result.weights["lexical"] == 0.0
    assert result.held_out_fitted.spearman > 0.95 > abs(result.held_out_levenshtein.spearman)
    with pytest.raises(ValueError, match="too few"):
        ked_calibrate(instances[:5])


def test_correlate_reports_pearson_and_spearman():
    result = correlate([1, 2, 3, 4], [10, 20, 30, 100])
    assert result.spearman == pytest.approx(1.0) and 0.8 < result.pearson < 1.0


@pytest.fixture
def odd_endpoint():
    """A judge endpoint that answers no choice, or only after the client stopped waiting."""
    import threading

    from flask import Flask, jsonify
    from werkzeug.serving import make_server

    app = Flask(__name__)
    release = threading.Event()

    @app.post("/v1/chat/completions")
    def answer():
        from flask import request

        if request.json["model"] == "slow-judge":
            release.wait(30)  # until the test has its error
        return jsonify(id="x", object="chat.completion", created=0, model=request.json["model"], choices=[])

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    release.set()
    server.shutdown()


def test_a_judge_that_answers_no_choice_or_too_late_is_named_for_what_it_did(odd_endpoint):
    from study.metrics.judges.client import JudgeError

    empty = OpenAIJudge(base_url=odd_endpoint, model="empty-judge")
    with pytest.raises(JudgeError, match="malformed response: its list of choices is empty"):
        empty.ask("v1", [{"role": "user", "content": "Rate this."}])
    slow = OpenAIJudge(base_url=odd_endpoint, model="slow-judge", timeout_seconds=0.5)
    with pytest.raises(JudgeError, match="did not answer within 0.5 s") as error:
        slow.ask("v1", [{"role": "user", "content": "Rate this."}])
    assert "is it running" not in str(error.value)  # it is: it is slow


def test_the_deterministic_judge_reads_texts_that_span_several_lines(judge):
    # A live context starts with the prompt and its newline, and suggestions and final texts
    # can hold paragraphs: the judge must read them whole, not as missing.
    context = "Write about the lab.\nThe experiment ran at room temperature for three hours and"
    repeat = har(HarItem(context, " the samples were dried.", " for three hours and the samples dried."), judge)
    assert repeat.accept is False and repeat.rule.startswith("1.")
    edited = ked("The cell was kept at 273 K.\nIt worked.", "The cell was kept at 298 K.\nIt worked.", judge)
    assert edited.value == WEIGHTS["complex_entity"]
