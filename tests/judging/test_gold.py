"""Gold items: a bad gold file is named by line with the fix, and judges who miss gold are flagged."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.cli import main
from study.judging.gold import GoldError, check_judges, read
from tests.judging.finished import set_section
from tests.judging.test_pages import judged_study  # noqa: F401


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


def test_a_gold_file_with_fewer_items_than_gold_per_task_is_said_at_build(judged_study):
    (judged_study / "gold.jsonl").write_text('{"text": "spam spam", "score": 1}\n')
    set_section(judged_study, "judging", {"unit": "document", "k": 1, "items_per_task": 2, "gold": "gold.jsonl",
                                          "gold_per_task": 3})  # fmt: skip
    built = CliRunner().invoke(main, ["judging", "build", str(judged_study)])
    assert built.exit_code == 0, built.output
    assert "1 gold item(s): 1 task(s)" in built.output
    assert ("Each task carries 1 gold item(s), not gold_per_task = 3: gold.jsonl holds only 1. Fix: add "
            "known-answer texts to it, or lower [judging] gold_per_task") in built.output
