"""Gold items: a bad gold file is named by line with the fix, and judges who miss gold are flagged."""

from __future__ import annotations

import pytest

from study.judging.gold import GoldError, check_judges, read


def test_a_bad_line_of_the_gold_file_is_named_with_the_fix(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"text": "spam spam", "score": 1}\n{"text": "fine", "score": 7}\n')
    with pytest.raises(GoldError, match=r"gold.jsonl line 2: score must be one of the rubric's scores \[1, 2, 3, 4, 5\], got 7"):
        read(path, (5, 4, 3, 2, 1))
    path.write_text('{"text": "spam spam", "score": 1}\nnot json\n')
    with pytest.raises(GoldError, match="line 2: not JSON"):
        read(path, (1, 2))


def test_a_judge_below_the_share_of_right_gold_answers_is_flagged():
    checks = check_judges(
        [("careful", 1, 1), ("careful", 2, 1), ("careless", 5, 1), ("careless", 1, 1)],
        tolerance=1, min_correct=0.75,
    )  # fmt: skip
    assert not checks["careful"].flagged and checks["careful"].share == 1.0
    assert checks["careless"].flagged and checks["careless"].share == 0.5
