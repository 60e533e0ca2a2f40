"""The participant's path from Prolific on the real task server: the study URL Prolific hands
out starts or resumes a session, a preview is a preview, and the completion page sends the
participant back to Prolific with the study's completion code."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from study.prolific import studies, submissions
from study.store import reading
from study.store import sessions as session_store
from tests.prolific.conftest import TASK_URL
from tests.prolific.walk import join, take_part


def published(ctx, places: int = 3) -> dict:
    made = studies.create_draft(ctx, studies.Draft("Write with AI", 250, places, 10, TASK_URL))
    studies.publish(ctx, made["study_id"])
    return made


def test_the_prolific_url_starts_a_session_bound_to_the_participant_and_resumes_it(ctx, prolific, task_client):
    made = published(ctx)
    joined = join(prolific, made["study_id"], "5f3e9a1b2c3d4e5f6a7b8c9d")
    url = urlsplit(joined["url"])
    first = task_client.get(f"{url.path}?{url.query}")
    assert first.status_code == 302 and first.location.endswith("/consent")
    session_id = first.location.split("/")[2]
    with reading(ctx.engine) as connection:
        session = session_store.get(connection, session_id)
    assert (session["worker_id"], session["hit_id"], session["assignment_id"]) == (
        "5f3e9a1b2c3d4e5f6a7b8c9d", made["study_id"], joined["submission_id"])
    # Reloading the link, even with another SESSION_ID, resumes the one session of this study.
    again = task_client.get(f"/task?PROLIFIC_PID=5f3e9a1b2c3d4e5f6a7b8c9d&STUDY_ID={made['study_id']}"
                            "&SESSION_ID=aaaaaaaaaaaaaaaaaaaaaaaa")  # fmt: skip
    assert again.location == first.location
    # No skipping: the writing page of a session at consent sends back to consent.
    assert task_client.get(f"/s/{session_id}/writing").location.endswith("/consent")


def test_finishing_redirects_to_prolifics_completion_url_with_the_studys_code(ctx, prolific, task_client):
    made = published(ctx)
    took = take_part(prolific, task_client, made["study_id"], "aaaabbbbccccddddeeeeffff")
    assert took.completion == f"{prolific.url}/submissions/complete?cc={made['completion_code']}"
    on_prolific = ctx.client.get(f"submissions/{took.submission_id}/")
    assert on_prolific["status"] == "AWAITING REVIEW"
    assert on_prolific["study_code"] == made["completion_code"]
    report = submissions.sync(ctx)
    assert [s.problems for s in report.submissions] == [[]]


def test_a_preview_or_a_missing_pid_is_a_preview_and_a_foreign_study_is_refused(ctx, task_client):
    made = published(ctx)
    preview = task_client.get(f"/task?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={made['study_id']}"
                              "&SESSION_ID={{%SESSION_ID%}}")  # fmt: skip
    assert preview.status_code == 200
    assert "This is a preview. Take part through Prolific to begin." in preview.get_data(as_text=True)
    assert task_client.get(f"/task?STUDY_ID={made['study_id']}").status_code == 200
    foreign = task_client.get("/task?PROLIFIC_PID=p1&STUDY_ID=ffffffffffffffffffffffff&SESSION_ID=s1")
    assert foreign.status_code == 400
    assert "this Prolific study is not one of this study&#39;s" in foreign.get_data(as_text=True)
    with reading(ctx.engine) as connection:
        assert session_store.all_sessions(connection) == []


def test_once_per_participant_refuses_a_second_study_to_someone_sync_saw_submit(make_ctx, prolific, model_url):
    from dataclasses import replace

    from study.server import create_app

    ctx = make_ctx(budget="1000.00", once_per_participant=True)
    study = replace(ctx.study, suggestions=replace(ctx.study.suggestions, endpoint=model_url))
    client = create_app(study, engine=ctx.engine).test_client()
    first = published(ctx)
    take_part(prolific, client, first["study_id"], "111122223333444455556666")
    submissions.sync(ctx)
    second = published(ctx)
    # The block group keeps them out on Prolific; the server refuses them even without it.
    refused = client.get(f"/task?PROLIFIC_PID=111122223333444455556666&STUDY_ID={second['study_id']}"
                         "&SESSION_ID=bbbbbbbbbbbbbbbbbbbbbbbb")  # fmt: skip
    assert refused.status_code == 403
    assert "already taken part" in refused.get_data(as_text=True)
    blocked = ctx.client.get(f"studies/{second['study_id']}/")["filters"]
    assert blocked[0]["filter_id"] == "participant_group_blocklist"


@pytest.mark.parametrize("leaves, says", [
    ("return", "You returned this study on Prolific, so it can no longer be completed or paid."),
    ("time out", "Prolific timed out your submission of this study"),
])  # fmt: skip
def test_a_participant_who_left_their_submission_is_told_so_rather_than_write_on_unpaid(
    ctx, prolific, task_client, leaves, says
):
    made = published(ctx)
    took = take_part(prolific, task_client, made["study_id"], "0a1b2c3d4e5f0a1b2c3d4e5f", finish=False)
    if leaves == "return":
        assert httpx.post(prolific.url + "/_emulator/return",
                          json={"submission_id": took.submission_id}).status_code == 200  # fmt: skip
    else:  # past the study's maximum allowed time (3 x 10 + 2 minutes)
        assert httpx.post(prolific.url + "/_emulator/clock", json={"advance": 33 * 60}).status_code == 200
    submissions.sync(ctx)

    again = task_client.get(f"/task?PROLIFIC_PID=0a1b2c3d4e5f0a1b2c3d4e5f&STUDY_ID={made['study_id']}"
                            f"&SESSION_ID={took.submission_id}")  # fmt: skip

    assert again.status_code == 403, again.location
    assert says in again.get_data(as_text=True).replace("&#39;", "'")


def test_a_participant_who_withdrew_mid_study_is_asked_to_return_the_submission(ctx, prolific, task_client, study_folder):
    # `study withdraw` while their session was open: the study link and the session's pages
    # refuse them, in Prolific's words (study.review.rounds.resume_refusal).
    from click.testing import CliRunner

    from study.cli import main

    made = published(ctx)
    joined = join(prolific, made["study_id"], "5f3e9a1b2c3d4e5f6a7b8cff")
    url = urlsplit(joined["url"])
    session_id = task_client.get(f"{url.path}?{url.query}").location.split("/")[2]
    done = CliRunner().invoke(main, ["withdraw", "5f3e9a1b2c3d4e5f6a7b8cff", "--study", str(study_folder)])
    assert done.exit_code == 0, done.output

    for page in (task_client.get(f"{url.path}?{url.query}", follow_redirects=True),
                 task_client.get(f"/s/{session_id}/consent")):  # fmt: skip
        assert page.status_code == 403
        assert "Please return this submission" in page.get_data(as_text=True)
