"""CollabLLM's interactivity (ITR, study.paradigms.chat.metrics.itr): the document variant of
the judge's prompt, its 3/2/1 answer read or counted unreadable, the Table 1 rescalings, and the
deterministic judge's documented rule for it."""

from __future__ import annotations

import pytest

from study.metrics.judges.deterministic import DeterministicJudge
from study.paradigms.chat.metrics.itr import ANCHORS, itr, messages, read_score, rescaled


def _chat(*replies: str) -> list[dict]:
    out = []
    for reply in replies:
        out += [{"role": "user", "content": "Can you help with my essay?"}, {"role": "assistant", "content": reply}]
    return out


def test_the_prompt_has_the_writing_anchors_the_intent_the_goal_and_the_whole_conversation():
    [prompt] = messages(_chat("Who is it for?", "Here is a draft."), "a blog post, Space Western", "GOAL TEXT")
    text = prompt["content"]
    assert [f"{score} = {name}" in text for score, name, _ in ANCHORS] == [True, True, True]
    assert '<INTENT>: "a blog post, Space Western"' in text and '<GOAL>: "GOAL TEXT"' in text
    assert "USER: Can you help with my essay?\n\nASSISTANT: Who is it for?" in text
    assert "ASSISTANT: Here is a draft." in text and '"score": 3|2|1' in text


@pytest.mark.parametrize(("answer", "score"), [
    ('{"interactivity": {"thought": "asked well", "score": 3}}', 3),
    ('```json\n{"interactivity": {"thought": "some", "score": "2"}}\n```', 2),
    ('Here: {"interactivity": {"thought": "none", "score": 1.0}}', 1),
])  # fmt: skip
def test_a_score_of_3_2_or_1_is_read_however_the_judge_wraps_it(answer, score):
    assert read_score(answer).score == score


class Wordy:
    calls = 0

    def ask(self, version, asked):
        self.calls += 1
        return '{"interactivity": {"thought": "very", "score": 5}}'  # not on the scale


def test_an_answer_off_the_scale_three_times_is_no_score_not_a_guess():
    judge = Wordy()
    result = itr(_chat("Hi?"), "an essay", judge)
    assert result.score is None and judge.calls == 3 and '"score": 5' in result.raw


def test_table_1_rescalings_of_the_raw_score():
    assert [rescaled(s) for s in (1, 2, 3)] == [0.0, 0.5, 1.0]  # (a): [0, 1], what the report shows
    assert [round(rescaled(s, "b"), 3) for s in (1, 2, 3)] == [0.333, 0.667, 1.0]
    assert [rescaled(s, "c") for s in (1, 2, 3)] == [-3.0, -1.0, 1.0]
    assert rescaled(2.84) * 100 == pytest.approx(92.0)  # a mean score: Online DPO's Doc ITR


@pytest.mark.parametrize(("replies", "score"), [
    (("Who will read it?", "Here is a draft. Shall I shorten it?"), 3),
    (("Who will read it?", "Here is a draft.", "Done."), 2),  # 1 of 3 asks
    (("Here is a draft.", "Done."), 1),
])  # fmt: skip
def test_the_deterministic_judge_scores_the_share_of_replies_that_ask(replies, score):
    judged = itr(_chat(*replies), "an essay", DeterministicJudge(), goal='A goal with "quotes"\nand lines.')
    assert judged.score == score
    assert judged.thought.endswith(f"of {len(replies)} assistant replies ask the user a question")
