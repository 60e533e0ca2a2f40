"""The review rules, one at a time: code matches, finished, minimum time, asked the AI."""

from __future__ import annotations

import pytest

from study.mturk.emulator.worker import answers_xml
from study.mturk.review import REJECT_INTRO, propose

CODE = "K7PX2MQ9RT4W"


def _assignment(code=CODE, worker="A1WRITER", hit="3HIT"):
    return {
        "assignment_id": "3ASSIGN",
        "worker_id": worker,
        "hit_id": hit,
        "answer": answers_xml({"verificationCode": code}) if code is not None else None,
    }


def _session(**changes):
    session = {
        "session_id": "a" * 32,
        "worker_id": "A1WRITER",
        "hit_id": "3HIT",
        "stage": "complete",
        "verification_code": CODE,
        "writing_started_at": 1000.0,
        "writing_finished_at": 1700.0,
    }
    return {**session, **changes}


def _decide(assignment=None, session="default", ai_requests=2, min_seconds=600, min_ai_requests=1):
    session = _session() if session == "default" else session
    return propose(
        assignment or _assignment(),
        session,
        ai_requests,
        min_seconds=min_seconds,
        min_ai_requests=min_ai_requests,
        approve_feedback="Thanks!",
    )


def test_a_finished_session_with_the_right_code_time_and_ai_use_is_approved():
    proposal = _decide()
    assert (proposal.decision, proposal.reasons, proposal.feedback) == ("approve", [], "Thanks!")


@pytest.mark.parametrize(
    ("assignment", "session", "words"),
    [
        (
            _assignment(code="WRONGCODE123"),
            "default",
            "verification code 'WRONGCODE123' does not match",
        ),
        (_assignment(code=None), "default", "carries no verification code"),
        (_assignment(worker="A1OTHER"), "default", "the session belongs to worker A1WRITER"),
        (_assignment(hit="3OTHERHIT"), "default", "opened for HIT 3HIT"),
        (_assignment(), None, "no session was bound"),
    ],
)
def test_the_code_must_match_a_session_of_the_same_worker_and_hit(assignment, session, words):
    proposal = _decide(assignment, session)
    assert proposal.decision == "reject"
    assert words in proposal.reasons[0]
    assert proposal.feedback.startswith(REJECT_INTRO)


def test_an_unfinished_session_is_rejected():
    proposal = _decide(session=_session(stage="survey", verification_code=None))
    assert proposal.decision == "reject"
    assert any("stopped at the survey step" in reason for reason in proposal.reasons)


def test_writing_shorter_than_the_minimum_is_rejected_with_the_seconds():
    proposal = _decide(session=_session(writing_finished_at=1000.0 + 420))
    assert proposal.reasons == ["the writing took 420 seconds, less than the required 600"]
    assert (
        _decide(session=_session(writing_finished_at=1000.0 + 598)).decision == "approve"
    )  # server slack


def test_a_writer_who_never_asked_the_ai_is_rejected():
    proposal = _decide(ai_requests=0)
    assert proposal.reasons == [
        "the AI was asked for suggestions 0 times, fewer than the required 1"
    ]
    assert _decide(ai_requests=2, min_ai_requests=3).decision == "reject"
    assert _decide(ai_requests=0, min_ai_requests=0).decision == "approve"


def test_a_writer_who_wrote_too_little_is_rejected():
    def decide(written, required):
        return propose(
            _assignment(), _session(), 2, min_seconds=600, min_ai_requests=1,
            approve_feedback="Thanks!", writer_chars=written, min_writer_chars=required,
        )  # fmt: skip

    assert decide(40, 100).reasons == [
        "the text holds 40 characters written by the worker, fewer than the required 100"
    ]
    assert decide(100, 100).decision == "approve"
    assert decide(0, 0).decision == "approve"


def test_asking_the_ai_counts_the_servers_requests_and_writing_counts_typed_text(ctx, task_app):
    """A script can post `suggestion-get` events and accept suggestions without typing: neither
    the made-up events nor the AI's text count; the server's own requests and typed text do."""
    from study.review import evidence
    from study.store import events as event_store
    from study.store import reading, writing
    from study.store import sessions as session_store
    from tests.mturk.walk import event

    client = task_app.test_client()
    with writing(ctx.engine) as connection:
        session_id = session_store.create(connection, access_code="bot")["session_id"]
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"})
    made_up = [event(0, "system-initialize")] + [event(i, "suggestion-get") for i in range(1, 4)]
    accepted = event(4, "text-insert")
    accepted.update(eventSource="api", textDelta={"ops": [{"retain": 7}, {"insert": " x" * 80}]})
    typed = event(5, "text-insert")
    typed["textDelta"] = {"ops": [{"retain": 7}, {"insert": "Hello."}]}
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": made_up + [accepted, typed]}).status_code == 200

    with reading(ctx.engine) as connection:
        assert session_store.ai_requests(connection, session_id) == 0
        records = event_store.records(connection, session_id)
    assert evidence.writer_chars(records) == len("Hello.")

    assert client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Prompt."}).status_code == 200
    with reading(ctx.engine) as connection:
        assert session_store.ai_requests(connection, session_id) == 1
