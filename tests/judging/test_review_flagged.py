"""`study judging review` as a researcher pays from it: a judge the gold check flagged is named
as flagged on their line, with how they did on the gold items and whether their ratings count,
and is paid unless the researcher chose to reject flagged judges ([judging] reject_failed_gold).
Judges take the HITs on the emulator and rate on the real task server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main
from study.mturk import client
from study.server import create_app
from study.store import make_engine
from tests.judging.finished import set_section
from tests.judging.walk import judge_hit

GOLD = {"text": "asdf asdf asdf qwer qwer zxcv", "score": 1}


def careful(text):
    return GOLD["score"] if text == GOLD["text"] else 4


def careless(text):
    return 5


@pytest.fixture
def judged(finished_study, emulator):
    """Two judges have submitted their task: a careful one and one who rated the gold item 5."""

    def run(**judging):
        folder = finished_study
        (folder / "gold.jsonl").write_text(json.dumps(GOLD) + "\n")
        set_section(folder, "judging", {
            "unit": "document", "k": 2, "items_per_task": 3, "reward": "$0.60", "gold": "gold.jsonl",
            "gold_per_task": 1, "gold_tolerance": 1, "gold_min_correct": 0.75, **judging,
        })  # fmt: skip
        runner = CliRunner()
        assert runner.invoke(main, ["judging", "build", str(folder)]).exit_code == 0
        posted = runner.invoke(main, ["judging", "post", str(folder), "--endpoint-url", emulator.url])
        assert posted.exit_code == 0, posted.output
        (hit,) = client.connect(live=False, endpoint_url=emulator.url).call("ListHITs")["HITs"]
        study = config.load(folder)
        server = create_app(study, suggestion_engine=object(), engine=make_engine(study.database_url)).test_client()
        return {worker: judge_hit(emulator.url, server, hit["HITId"], worker, rate).assignment_id
                for worker, rate in (("A1CAREFUL", careful), ("A1CARELESS", careless))}  # fmt: skip

    return run


def review(folder, emulator, answer: str):
    return CliRunner().invoke(main, ["judging", "review", str(folder), "--endpoint-url", emulator.url], input=answer)


def statuses(emulator, assignments: dict[str, str]) -> dict[str, str]:
    mturk = client.connect(live=False, endpoint_url=emulator.url)
    return {worker: mturk.call("GetAssignment", AssignmentId=a)["Assignment"]["AssignmentStatus"]
            for worker, a in assignments.items()}  # fmt: skip


def test_a_flagged_judge_is_paid_by_default_and_their_line_says_they_were_flagged(finished_study, judged, emulator):
    assignments = judged()

    reviewed = review(finished_study, emulator, "y\n")

    assert reviewed.exit_code == 0, reviewed.output
    out = reviewed.output
    assert f"APPROVE  {assignments['A1CAREFUL']}  worker A1CAREFUL\n" in out  # nothing to add
    assert f"APPROVE  {assignments['A1CARELESS']}  worker A1CARELESS  flagged by gold\n" in out
    assert "! flagged by gold: 0 of 1 gold items rated within 1 of the known score (75% needed)" in out
    assert "! ratings left out of the results, report and release ([judging] exclude_failed_gold = true)" in out
    assert "! paid for the work done; to reject flagged judges set [judging] reject_failed_gold = true" in out
    # The researcher confirms knowing that one of the payments goes to a flagged judge.
    assert "Apply 2 approvals (1 of judges flagged by gold) and 0 rejections (sandbox)?" in out
    assert statuses(emulator, assignments) == {"A1CAREFUL": "Approved", "A1CARELESS": "Approved"}


def test_with_reject_failed_gold_the_flagged_judge_is_rejected_and_the_line_says_why(finished_study, judged, emulator):
    assignments = judged(reject_failed_gold=True, exclude_failed_gold=False)

    reviewed = review(finished_study, emulator, "y\n")

    assert reviewed.exit_code == 0, reviewed.output
    out = reviewed.output
    assert f"REJECT   {assignments['A1CARELESS']}  worker A1CARELESS  flagged by gold\n" in out
    assert "- too many texts with known answers were rated far from those answers" in out
    assert "! ratings kept, marked judge_flagged ([judging] exclude_failed_gold = false)" in out
    assert "! rejected: [judging] reject_failed_gold = true" in out
    assert "Apply 1 approvals and 1 rejections (1 of judges flagged by gold) (sandbox)?" in out
    assert statuses(emulator, assignments) == {"A1CAREFUL": "Approved", "A1CARELESS": "Rejected"}
