"""The final survey belongs to each conversation (CollabLLM rates every conversation, App. E;
issue 22 item 1): a participant's second conversation gets its own document and interaction
ratings, while a questionnaire placed `end_of_study` is still asked once per participant."""

from __future__ import annotations

from dataclasses import replace

from study import config
from study.server import create_app
from study.store import reading
from study.store import surveys as survey_store
from tests.chat.flow import CONFIRMED, choose_intent, prewrite, rate, say
from tests.chat.test_chat_path import FINAL

ONCE = """
[[surveys]]
name = "about_you"
placement = "end_of_study"
title = "About you"
[[surveys.items]]
id = "uses_chat_assistants"
type = "single"
text = "How often do you use AI chat assistants?"
options = ["Never", "Monthly", "Weekly", "Daily"]
"""


def _conversation(client, params: dict) -> str:
    response = client.get("/task", query_string=params)
    session_id = response.location.split("/")[2]
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    client.post(f"/s/{session_id}/instructions", data=CONFIRMED)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    for n in range(1, 9):
        assert say(client, session_id, f"Point {n}, please.").status_code == 200
        if n in (3, 6):
            assert rate(client, session_id, n).status_code == 200
    finish = {"last_seq": -1, "pending": 0, "document": "My document."}
    assert client.post(f"/s/{session_id}/chat/finish", json=finish).json["next"] == f"/s/{session_id}/survey"
    return session_id


def _survey_pages(client, session_id: str, ratings: tuple[str, str]) -> list[str]:
    """Answer every survey page the session shows; the titles of the pages, in order."""
    titles = []
    for _ in range(5):
        page = client.get(f"/s/{session_id}/survey", follow_redirects=False)
        if page.status_code == 302:
            assert page.location == f"/s/{session_id}/complete"
            return titles
        text = page.data.decode()
        if "Final evaluation" in text:
            titles.append("Final evaluation")
            answers = {**FINAL, "interaction_rating": ratings[0], "document_rating": ratings[1]}
        else:
            assert "About you" in text
            titles.append("About you")
            answers = {"uses_chat_assistants": "Weekly"}
        client.post(f"/s/{session_id}/survey", data=answers)
    raise AssertionError("the survey stage never ended")


def test_every_conversation_of_a_participant_gets_the_final_survey(chat_folder, model_url):
    (chat_folder / "study.toml").write_text((chat_folder / "study.toml").read_text() + ONCE)
    study = config.load(chat_folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
    app = create_app(study)
    client = app.test_client()
    first = _conversation(client, {"access_code": "twice"})
    assert _survey_pages(client, first, ("6", "7")) == ["Final evaluation", "About you"]
    second = _conversation(client, {"access_code": "twice", "another": "1"})
    assert second != first
    assert _survey_pages(client, second, ("9", "4")) == ["Final evaluation"]  # "About you" once

    with reading(app.extensions["study.engine"]) as connection:
        finals = {
            session: next(r["answers"] for r in survey_store.for_session(connection, session) if r["survey"] == "final")
            for session in (first, second)
        }
    assert (finals[first]["interaction_rating"], finals[first]["document_rating"]) == (6, 7)
    assert (finals[second]["interaction_rating"], finals[second]["document_rating"]) == (9, 4)
