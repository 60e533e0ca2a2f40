"""Qualification types: create, grant, revoke, list; the exclusion qualification and the
server-side repeat check that keep a worker from taking a once-per-worker study twice."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx
import pytest

from study.mturk import assignments, qualifications, repeat
from study.mturk.emulator.worker import visible_hits
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.mturk import mturk_assignments
from tests.mturk.conftest import post_hit
from tests.mturk.walk import take_hit


def test_create_grant_revoke_and_list(ctx, emulator):
    type_id = qualifications.create(
        ctx.requester, ctx.engine, "coauthor-qualified", "Passed the qualification round"
    )
    assert (
        qualifications.create(ctx.requester, ctx.engine, "coauthor-qualified", "again") == type_id
    )  # by name
    qualifications.grant(ctx.requester, type_id, ["A1ONE", "A1TWO"], value=5)
    assert {
        (q["WorkerId"], q["IntegerValue"]) for q in qualifications.holders(ctx.requester, type_id)
    } == {
        ("A1ONE", 5),
        ("A1TWO", 5),
    }
    assert qualifications.revoke(
        ctx.requester, type_id, ["A1ONE", "A1NEVER"], reason="Left the panel"
    ) == ["A1NEVER"]
    assert [q["WorkerId"] for q in qualifications.holders(ctx.requester, type_id)] == ["A1TWO"]
    listed = qualifications.list_types(ctx.requester, ctx.engine)
    assert [(t["Name"], t["StudyRole"]) for t in listed] == [("coauthor-qualified", "custom")]


def test_a_type_created_by_a_run_that_crashed_before_recording_it_is_adopted(ctx, emulator):
    made = ctx.requester.call(
        "CreateQualificationType", Name="round-1", Description="d", QualificationTypeStatus="Active"
    )["QualificationType"]
    assert (
        qualifications.create(ctx.requester, ctx.engine, "round-1", "d")
        == made["QualificationTypeId"]
    )


def test_names_are_per_environment(ctx, make_ctx, emulator):
    from tests.mturk.conftest import connect

    qualifications.create(ctx.requester, ctx.engine, "coauthor-qualified", "d")
    live = make_ctx(account=connect(emulator.url, live=True), budget="10")
    with pytest.raises(qualifications.QualificationError, match="sandbox and live"):
        qualifications.resolve(live.engine, live.environment, "coauthor-qualified")


def test_the_exclusion_qualification_keeps_a_worker_from_a_second_hit(make_ctx, emulator, task_app):
    ctx = make_ctx(once_per_worker=True, budget="100")
    first = post_hit(ctx, assignments=2, reward="2.50")
    requirement = emulator.state.data["hits"][first]["QualificationRequirements"][-1]
    assert (requirement["Comparator"], requirement["ActionsGuarded"]) == (
        "DoesNotExist",
        "DiscoverPreviewAndAccept",
    )
    take_hit(emulator.url, task_app.test_client(), first, "A1REPEATER")
    report = assignments.sync(ctx)
    assert report.excluded_workers == ["A1REPEATER"]
    assert assignments.sync(ctx).excluded_workers == []  # granted once
    second = post_hit(ctx, assignments=2, reward="2.50")
    assert second not in [h["HITId"] for h in visible_hits(emulator.state, "A1REPEATER")]
    refused = httpx.post(
        f"{emulator.url}/_emulator/accept", data={"HITId": second, "WorkerId": "A1REPEATER"}
    )
    assert refused.status_code == 409 and "DoesNotExist" in refused.json()["error"]
    assert second in [h["HITId"] for h in visible_hits(emulator.state, "A1NEWCOMER")]


def synced(ctx, assignment_id: str, worker_id: str, status: str = "Submitted") -> None:
    """The assignment as `study mturk sync` records it after seeing it at MTurk."""
    with writing(ctx.engine) as connection:
        connection.execute(mturk_assignments.insert().values(
            environment=ctx.environment, assignment_id=assignment_id, hit_id="3H1",
            worker_id=worker_id, status=status, synced_at=time.time(),
        ))  # fmt: skip


def test_the_repeat_check_finds_a_workers_earlier_session(ctx):
    with writing(ctx.engine) as connection:
        session_store.create(connection, worker_id="A1W", assignment_id="3FIRST", hit_id="3H1")
    synced(ctx, "3FIRST", "A1W")
    with writing(ctx.engine) as connection:
        assert (
            repeat.earlier_session(connection, "A1W", "3FIRST") is None
        )  # returning to the same one
        assert repeat.earlier_session(connection, "A1W", "3SECOND")["assignment_id"] == "3FIRST"
        assert repeat.earlier_session(connection, "A1OTHER", "3SECOND") is None
    assert repeat.once_per_worker(
        replace(ctx.study, raw={**ctx.study.raw, "mturk": {"once_per_worker": True}})
    )
    assert not repeat.once_per_worker(ctx.study)


def test_the_task_server_refuses_a_second_session_for_a_once_per_worker_study(ctx):
    from study.server import create_app

    study = replace(ctx.study, raw={**ctx.study.raw, "mturk": {"once_per_worker": True}})
    client = create_app(study, suggestion_engine=object(), engine=ctx.engine).test_client()
    worker = {"workerId": "A1W", "hitId": "3H", "turkSubmitTo": "https://workersandbox.mturk.com"}
    assert client.get("/task", query_string={**worker, "assignmentId": "3FIRST"}).status_code == 302
    assert (
        client.get("/task", query_string={**worker, "assignmentId": "3FIRST"}).status_code == 302
    )  # returning
    synced(ctx, "3FIRST", "A1W")
    second = client.get("/task", query_string={**worker, "assignmentId": "3SECOND"})
    assert second.status_code == 403 and b"already taken part" in second.data
    with reading(ctx.engine) as connection:
        assert session_store.by_assignment(connection, "3SECOND") is None


def test_sessions_nobody_confirmed_do_not_lock_a_worker_out(ctx):
    """Anyone can open the task with a real worker's id and a made-up assignment; until MTurk
    confirms that assignment (sync), it does not count as the worker's earlier session."""
    from study.server import create_app

    study = replace(ctx.study, raw={**ctx.study.raw, "mturk": {"once_per_worker": True}})
    client = create_app(study, suggestion_engine=object(), engine=ctx.engine).test_client()
    worker = {"workerId": "A1VICTIM", "hitId": "3H", "turkSubmitTo": "https://www.mturk.com"}
    assert client.get("/task", query_string={**worker, "assignmentId": "3MADEUP"}).status_code == 302
    real = client.get("/task", query_string={**worker, "assignmentId": "3REAL"})
    assert real.status_code == 302
    synced(ctx, "3MADEUP", "A1VICTIM", status="Rejected")  # MTurk knows it, but as rejected work
    with reading(ctx.engine) as connection:
        assert repeat.earlier_session(connection, "A1VICTIM", "3NEXT") is None


def test_a_judge_is_refused_at_the_task_once_mturk_confirmed_their_judging_even_if_rejected(ctx):
    """A judge read the study's texts whether or not they were paid; a judging assignment nobody
    confirmed (sync has not seen it) locks nobody out, as for writers' sessions."""
    from study.server import create_app
    from study.store.mturk import mturk_hits

    study = replace(ctx.study, raw={**ctx.study.raw, "mturk": {"once_per_worker": True}})
    client = create_app(study, suggestion_engine=object(), engine=ctx.engine).test_client()
    with writing(ctx.engine) as connection:
        connection.execute(mturk_hits.insert().values(
            environment=ctx.environment, request_token="t1", hit_id="3H1", max_assignments=2, reward="0.60",
            task_url="https://study.example.org/judge", status="Assignable", created_at=time.time(),
        ))  # fmt: skip
    synced(ctx, "3JUDGED", "A1JUDGE", status="Rejected")  # on the judging HIT 3H1
    worker = {"hitId": "3W", "turkSubmitTo": "https://www.mturk.com", "assignmentId": "3WRITE"}
    refused = client.get("/task", query_string={**worker, "workerId": "A1JUDGE"})
    assert refused.status_code == 403 and b"rated texts from this study" in refused.data
    assert client.get("/task", query_string={**worker, "workerId": "A1OTHER"}).status_code == 302
