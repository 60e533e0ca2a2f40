"""Reviewing a chat study's HITs (CollabLLM): a worker who held the whole conversation is
approved; the writing rules' "characters typed in the editor" do not apply to a chat, whose
writing is the worker's messages."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from study.cli import write_study_files
from study.mturk import assignments, review
from tests.chat.flow import CONFIRMED, choose_intent, prewrite, rate, say
from tests.mturk.conftest import post_hit
from tests.mturk.walk import accept, completion_form

FINAL = {
    "strengths": "It asked good questions about my tone.",
    "weaknesses": "Some replies were too generic for me.",
    "end_reason": "I found the AI writing assistant not helpful.",
    "interaction_rating": "8",
    "document_rating": "9",
}


@pytest.fixture
def study_folder(tmp_path) -> Path:
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements={"min_seconds = 600": "min_seconds = 0"})
    return folder


def _converse(task, session_id: str, messages: list[str]) -> None:
    assert task.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    task.post(f"/s/{session_id}/instructions", data=CONFIRMED)
    choose_intent(task, session_id)
    prewrite(task, session_id)
    for number, text in enumerate(messages, start=1):
        answer = say(task, session_id, text)
        if answer.status_code == 409:  # the periodic rating owed after every 3rd exchange
            assert rate(task, session_id, answer.json["owed"][0]["occasion"]).status_code == 200
            answer = say(task, session_id, text)
        assert answer.status_code == 200, (number, answer.json)
    finished = task.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "pending": 0, "document": "Doc."})
    assert finished.status_code == 200, finished.json
    assert task.post(f"/s/{session_id}/survey", data=FINAL).status_code == 302


def _take(emulator, task, hit_id: str, worker_id: str, messages: list[str]) -> str:
    accepted = accept(emulator.url, hit_id, worker_id)
    url = urlsplit(accepted["TaskURL"])
    session_id = task.get(f"{url.path}?{url.query}").location.split("/")[2]
    _converse(task, session_id, messages)
    action, fields = completion_form(task.get(f"/s/{session_id}/complete").get_data(as_text=True))
    assert httpx.post(action, data=fields).status_code == 200
    return session_id


def test_a_worker_who_held_the_conversation_is_approved_and_one_who_said_little_is_not(
    ctx, emulator, task_app
):
    hit_id = post_hit(ctx, assignments=2, reward="10.00")
    task = task_app.test_client()
    talker = [f"Message {n}: please help me shape the opening paragraph of my document." for n in range(8)]
    _take(emulator, task, hit_id, "A1CHATTER", talker)
    _take(emulator, task, hit_id, "A1TERSE", ["ok"] * 8)
    assignments.sync(ctx)

    proposals = {p.worker_id: p for p in review.proposals(ctx)}
    assert proposals["A1CHATTER"].decision == "approve", proposals["A1CHATTER"].reasons
    assert proposals["A1TERSE"].decision == "reject"
    assert proposals["A1TERSE"].reasons == [
        "the worker's messages hold 16 characters, fewer than the required 100"
    ]
