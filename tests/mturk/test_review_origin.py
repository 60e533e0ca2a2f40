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


def test_a_script_that_logs_its_pasted_text_as_the_assistants_is_still_flagged(ctx, emulator, task_app):
    # A page can be bypassed by a script: one that posts the pasted text as an `api` insert (as
    # the editor logs an accepted suggestion) must not pass as the assistant's text, since no
    # suggestion the session was shown holds it.
    import httpx

    from tests.mturk.walk import completion_form, event
    from tests.mturk.walk import accept as accept_hit

    ctx.study = replace(ctx.study, outside_paste="flag")
    hit_id = post_hit(ctx)
    accepted = accept_hit(emulator.url, hit_id, "A1SCRIPT")
    client = task_app.test_client()
    path, query = accepted["TaskURL"].split("/", 3)[3].split("?", 1)
    session_id = client.get(f"/{path}?{query}").location.split("/")[2]
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert client.post(f"/s/{session_id}/instructions").status_code == 302
    assert client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"}).status_code == 302
    events = [event(0, "system-initialize"), event(1, "suggestion-get")]
    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt."}).status_code == 200
    typed = event(2, "text-insert")
    typed["textDelta"] = {"ops": [{"retain": len("Prompt.")}, {"insert": " " + WRITTEN}]}
    typed["eventSource"] = "api"
    events.append(typed)
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
    done = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 2, "text": f"Prompt. {WRITTEN}\n"})
    assert done.status_code == 200, done.json
    assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"}).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    action, fields = completion_form(client.get(f"/s/{session_id}/complete").get_data(as_text=True))
    assert httpx.post(action, data=fields).status_code in (200, 302, 303)
    assignments.sync(ctx)

    [proposal] = review.proposals(ctx)
    [flag] = proposal.flags
    assert flag.startswith(f"text from outside, event 2: {len(WRITTEN) + 1} characters inserted at once")
