"""Who passes: the rules of study.review.rules, in their order of precedence."""

from __future__ import annotations

import pytest

from study.review import rules
from tests.review.sessions import build_events

PAPER = {"needed": 2, "pass_mark": 4, "max_spread": 1}


def test_two_agreeing_ratings_at_or_above_the_pass_mark_pass_with_the_lower_median():
    found = rules.outcome([5, 4], **PAPER)
    assert (found.status, found.score, found.passed) == (rules.PASSED, 4, True)
    assert rules.outcome([5, 5], **PAPER).score == 5


def test_agreeing_ratings_below_the_pass_mark_fail():
    found = rules.outcome([2, 3], **PAPER)
    assert (found.status, found.score, found.passed, found.final) == (rules.FAILED, 2, False, True)


def test_too_few_ratings_wait():
    found = rules.outcome([5], **PAPER)
    assert (found.status, found.score, found.final) == (rules.AWAITING, None, False)


@pytest.mark.parametrize(
    ("scores", "why"), [([3, 4], "both sides"), ([5, 3], "both sides"), ([1, 3], "too far")]
)
def test_disagreements_go_to_adjudication(scores, why):
    found = rules.outcome(scores, **PAPER)
    assert found.status == rules.DISAGREEMENT and why in found.reason and not found.final


def test_a_wider_spread_can_be_allowed():
    assert rules.outcome([1, 3], needed=2, pass_mark=4, max_spread=2).status == rules.FAILED


def test_the_median_of_three_ratings_is_the_middle_one():
    assert rules.outcome([4, 5, 5], needed=3, pass_mark=4).score == 5
    assert rules.final_score([4, 4, 5, 5]) == 4


def test_an_adjudication_decides_whatever_the_ratings_say():
    found = rules.outcome([3, 5], **PAPER, adjudicated=4)
    assert (found.status, found.score, found.reason) == (rules.PASSED, 4, "adjudicated")
    assert rules.outcome([5, 5], **PAPER, adjudicated=2).status == rules.FAILED


def test_a_disqualified_session_fails_without_ratings_unless_adjudicated():
    reason = "no interaction with the AI"
    found = rules.outcome([], **PAPER, disqualified=reason)
    assert (found.status, found.score, found.final, found.reason) == (
        rules.DISQUALIFIED,
        None,
        True,
        reason,
    )
    assert rules.outcome([5, 5], **PAPER, disqualified=reason).status == rules.DISQUALIFIED
    assert rules.outcome([], **PAPER, disqualified=reason, adjudicated=5).passed


def test_a_session_that_never_asked_the_ai_is_disqualified():
    reason = rules.disqualification(0, min_ai_requests=1)
    assert reason and "asked for suggestions 0 times" in reason


def test_asking_the_ai_counts_as_interaction_even_without_accepting():
    assert rules.disqualification(1, min_ai_requests=1) is None
    assert rules.disqualification(1, min_ai_requests=2) is not None
    assert rules.disqualification(0, min_ai_requests=0) is None  # rule off


def test_the_log_counts_tab_presses_for_reviewers_to_see():
    asked = build_events("Prompt.", [("W", " Hm."), ("Q", "")])
    assert rules.ai_requests(asked) == 1
