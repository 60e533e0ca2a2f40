"""The preregistration record and a survey asked of some arms only (`arms`): a record of a study
whose surveys ask every arm holds them as a record made before `arms` existed did, so such a
record still verifies without a deviation; limiting a survey to arms after the record is one."""

from __future__ import annotations

import json

from tests.plan.conftest import edit
from tests.plan.test_preregister import run

ASSISTANT = {"name": "assistant", "placement": "after_session",
             "items": [{"id": "ai_helpful", "type": "likert", "text": "How helpful were the AI's suggestions?"}]}  # fmt: skip


def test_a_survey_of_every_arm_is_recorded_as_before_and_limiting_it_later_is_a_deviation(planned):
    edit(planned, lambda data: data.update(surveys=[ASSISTANT]))
    assert run("preregister", planned).exit_code == 0
    record = json.loads((planned / "preregistration.json").read_text())
    # As an earlier version wrote it (no `arms` key): its records verify unchanged.
    assert record["surveys"] and not any("arms" in s for s in record["surveys"])
    assert "No deviation from the record." in run("preregister", "verify", planned).output
    edit(planned, lambda data: data["surveys"][0].update(arms=["creative-high"]))
    result = run("preregister", "verify", planned)
    assert "DEVIATION (setting) surveys[assistant].arms" in result.output, result.output
