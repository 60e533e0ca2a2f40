"""Review proposals carry where the text came from ([session] outside_paste, issue 27 item 6):
with "flag", a submission whose text arrived in one insert of text the session never held (a
paste from elsewhere) is flagged for the researcher, and the rules alone still decide."""

from __future__ import annotations

from dataclasses import replace

import pytest

from study.mturk import assignments, review
from tests.mturk.conftest import post_hit
from tests.mturk.walk import WRITTEN, take_hit


@pytest.mark.parametrize("mode", ["flag", "allow"])
def test_a_pasted_text_is_flagged_in_the_proposal_when_the_study_flags(ctx, emulator, task_app, mode):
    ctx.study = replace(ctx.study, outside_paste=mode)
    hit_id = post_hit(ctx)
    # The walking writer's whole text reaches the log as one insert, as a paste does.
    take_hit(emulator.url, task_app.test_client(), hit_id, "A1PASTER")
    assignments.sync(ctx)

    [proposal] = review.proposals(ctx)
    assert proposal.decision == "approve", proposal.reasons
    if mode == "allow":
        assert proposal.flags == []
        return
    [flag] = proposal.flags
    assert flag.startswith(f"text from outside, event 2: {len(WRITTEN) + 1} characters inserted at once")
    assert flag.endswith("outside share of the final text: 100%")
