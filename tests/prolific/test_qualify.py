"""A qualification round on Prolific gates the main round on Prolific: writers take the
qualification study, reviewers rate, `study prolific qualify` pays and fills the qualified
group, and the main round's study admits only that group (on Prolific and on the server)."""

from __future__ import annotations

import httpx
import pytest

from study.prolific import groups, qualify, studies, submissions
from study.review import ratings as rating_store
from study.review import submissions as review_submissions
from study.store import writing
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import take_part
from tests.review.conftest import ROUNDS, add_reviewer, set_sections

GOOD, SPAM = "a1" * 12, "b2" * 12


@pytest.fixture
def study_folder(study_folder):
    set_sections(study_folder, rounds=ROUNDS, review={"ratings_per_submission": 2})
    return study_folder


def draft(ctx, round_name):
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, 2, 10, TASK_URL, round_name))
    studies.publish(ctx, made["study_id"])
    return made


def test_the_qualification_round_gates_the_main_round_through_the_qualified_group(ctx, prolific, task_client):
    first = draft(ctx, "qualification")
    assert "round=qualification&PROLIFIC_PID=" in first["task_url"]
    taken = {pid: take_part(prolific, task_client, first["study_id"], pid) for pid in (GOOD, SPAM)}
    submissions.sync(ctx)
    with pytest.raises(studies.StudyError, match="nobody has qualified yet.*study prolific qualify"):
        draft(ctx, "main")

    ana, ben = add_reviewer(ctx.engine, "ana"), add_reviewer(ctx.engine, "ben")
    with writing(ctx.engine) as connection:
        review_submissions.collect(connection, ctx.study)
        by_session = {s["session_id"]: s["submission_id"] for s in review_submissions.all_submissions(connection)}
        for pid, score in ((GOOD, 5), (SPAM, 1)):
            for reviewer in (ana, ben):
                rating_store.rate(connection, by_session[taken[pid].session_id], reviewer, score, "",
                                  scores=(1, 2, 3, 4, 5))  # fmt: skip

    report = qualify.qualify(ctx)
    assert report.added == [(GOOD, 5)] and len(report.paid) == 1  # the spam scored below pay_min_score
    statuses = {s["participant_id"]: s["status"] for s in ctx.client.pages(f"studies/{first['study_id']}/submissions/")}
    assert statuses == {GOOD: "APPROVED", SPAM: "AWAITING REVIEW"}
    again = qualify.qualify(ctx)
    assert again.added == [] and again.paid == []  # nobody paid or added twice

    main = draft(ctx, "main")
    (allow,) = ctx.client.get(f"studies/{main['study_id']}/")["filters"]
    assert allow == {"filter_id": "participant_group_allowlist",
                     "selected_values": [groups.find(ctx, "qualified")]}  # fmt: skip
    refused = httpx.post(prolific.url + "/_emulator/take-part",
                         json={"study_id": main["study_id"], "participant_id": SPAM})  # fmt: skip
    assert refused.status_code == 409
    # The server refuses them too, should they come by another way.
    door = task_client.get(f"/task?round=main&PROLIFIC_PID={SPAM}&STUDY_ID={main['study_id']}"
                           "&SESSION_ID=cccccccccccccccccccccccc")  # fmt: skip
    assert door.status_code == 403
    assert take_part(prolific, task_client, main["study_id"], GOOD, finish=False).session_id
