"""L3's adaptive rule: stage, strategy, idle threshold and length (README, Proactive co-writing)."""

from __future__ import annotations

from study.paradigms.proactive import policy
from study.paradigms.proactive.settings import ProactiveSettings

SETTINGS = ProactiveSettings(target_words=90)


def test_stage_follows_progress_towards_the_target_length():
    assert [policy.stage(w, SETTINGS) for w in (0, 29, 30, 59, 60, 500)] == [
        "early", "early", "middle", "middle", "late", "late"]


def test_idle_threshold_is_longer_early_and_grows_after_a_run_of_rejections():
    assert policy.idle_threshold("early", 0, SETTINGS) == 4000
    assert policy.idle_threshold("late", 0, SETTINGS) == 2000
    assert policy.idle_threshold("late", 2, SETTINGS) == 2000
    assert policy.idle_threshold("late", 3, SETTINGS) == 3000
    assert policy.idle_threshold("late", 4, SETTINGS) == 4500
    assert policy.idle_threshold("early", 10, SETTINGS) == SETTINGS.max_idle_ms


def test_an_acceptance_ends_the_run_of_rejections():
    assert policy.rejection_run(["rejected", "rejected", "accepted", "rejected"]) == 1
    assert policy.rejection_run(["rejected", "stale", "rejected", "rejected"]) == 3
    assert policy.rejection_run(["accepted_modified"]) == 0


def test_length_follows_what_the_writer_kept():
    assert policy.suggestion_tokens([], 30, SETTINGS) == 30
    assert policy.suggestion_tokens([4, 6, 8], 30, SETTINGS) == 9
    assert policy.suggestion_tokens([1], 30, SETTINGS) == SETTINGS.min_tokens
    assert policy.suggestion_tokens([40, 40], 30, SETTINGS) == 30


def test_plan_switches_from_stateless_to_stateful_as_the_text_grows():
    early = policy.plan("word " * 10, [], [], 30, SETTINGS)
    late = policy.plan("word " * 80, ["rejected"] * 3, [5], 30, SETTINGS)
    assert (early.stage, early.strategy, early.idle_ms, early.max_tokens) == ("early", "L1", 4000, 30)
    assert (late.stage, late.strategy, late.idle_ms, late.max_tokens) == ("late", "L2", 3000, 8)
