"""The papers' questionnaires as a participant of a study `study init` writes reads them.

A reproduced user study asks what the paper asked: CollabLLM's periodic and final evaluations
(App. E, the screenshots' text) and MindCopilot's post-task questionnaire (App. F, Tab. 12) are
shipped word for word, so an answer collected here answers the paper's question."""

from __future__ import annotations

import html
import re

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.store import reading
from study.store import surveys as survey_store
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat
from tests.conftest import CONTACT
from tests.server.flow import start, to_survey, to_writing

# CollabLLM App. E: the rating criteria of the interaction (periodic and final) and of the document.
INTERACTION_BANDS = (
    "The writing assistant consistently failed to understand your inputs, provided irrelevant or nonsensical responses, and made the interaction frustrating and unproductive.",
    "The writing assistant frequently misunderstood your requests, offered minimal assistance that didn't address your needs, and required repeated clarifications.",
    "The writing assistant was somewhat helpful but had noticeable issues with comprehension or responsiveness, providing partially relevant responses that contained errors or omissions.",
    "The writing assistant generally understood your inputs and efficiently provided relevant and useful responses or follow-up questions that push forward the document creation process, with only minor issues.",
    "The writing assistant consistently demonstrated clear understanding and provided insightful and comprehensive assistance that exceeded expectations and significantly enhanced your efficiency and outcomes.",
)  # fmt: skip
DOCUMENT_BANDS = (
    "The document contains numerous errors, inaccuracies, or irrelevant content, lacks coherence and structure, and is unusable for your objective.",
    "The document has significant issues such as incomplete sections, misleading information, or poor organization, only partially addresses your instructions, and requires substantial revisions.",
    "The document meets basic requirements but includes noticeable errors or omissions, provides some useful content but lacks depth or clarity, and requires moderate revisions to improve quality.",
    "The document is well-organized, covers the key topics as instructed, contains accurate and relevant information with minor errors, and serves as a strong foundation that fulfills your main objective.",
    "The document is comprehensive, insightful, and meticulously crafted, exceeds expectations by providing exceptional clarity and depth, requires minimal to no revisions, and significantly achieves your objective.",
)  # fmt: skip
END_REASONS = ("I am satisfied with the document the AI created.", "I found the AI writing assistant not helpful.",
               "I encountered technical issues with the interface.", "Other reason")  # fmt: skip
# MindCopilot Tab. 12: each item's name and wording; Tab. 13: the scale's labels.
TABLE12 = (
    "Mental Demand: How mentally demanding was the writing task under this interaction setting?",
    "Effort: How much effort did you have to invest to complete the writing task?",
    "Temporal Demand: How much time pressure did you feel while writing with the assistant?",
    "Frustration: How frustrated, irritated, or annoyed did you feel during the interaction?",
    "Intent Alignment: The suggestion matched what I was trying to express at that moment.",
    "Decision Facilitation: The suggestion helped me decide how to continue writing.",
    "Style Understanding: The assistant understood my writing style and preferences.",
    "Alignment Over Time: The assistant became more aligned with my intent as the interaction progressed.",
    "Timing Appropriateness: Suggestions were provided at appropriate moments during writing.",
    "Sense of Control: I felt in control of when and how the assistant intervened.",
)  # fmt: skip
SCALE = ("Very Bad", "Bad", "Lightly Bad", "Moderate", "Lightly Good", "Good", "Very Good")


def _text(page: str) -> str:
    """The page as a participant reads it: tags dropped, entities decoded, spaces collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _init(tmp_path, paradigm: str, endpoint: str = ""):
    """The study `study init --paradigm PARADIGM` writes, as a researcher leaves it to serve."""
    folder = tmp_path / paradigm
    ready = {'endpoint = ""': f'endpoint = "{endpoint}"', "min_seconds = 600": "min_seconds = 0", **CONTACT}
    write_study_files(folder, paradigm=paradigm, replacements=ready)
    return config.load(folder)


def test_a_chat_study_asks_collabllm_s_evaluations_in_the_paper_s_words(tmp_path, model_url):
    study = _init(tmp_path, "chat", model_url)
    app = create_app(study)
    client = app.test_client()
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)

    periodic = _text(client.get(f"/s/{session_id}/chat").get_data(as_text=True))
    assert ("Please rate your interaction experience in the recent 3 exchanges with the AI writing assistant "
            "from 1 to 10 based on the following criteria:") in periodic  # fmt: skip
    assert "Rate your interaction in the past 3 exchanges from 1 (worst) to 10 (best)" in periodic
    assert "Please submit to continue the conversation!" in periodic
    # Step 3's requirements say when it comes, before it first blocks the chat.
    assert "You need to fill in the periodic evaluation every 3 exchanges to continue the conversation." in periodic
    for band in INTERACTION_BANDS:
        assert band in periodic

    for exchange in range(1, 9):
        if exchange in (4, 7):
            assert rate(client, session_id, exchange - 1).status_code == 200
        assert say(client, session_id, f"Message {exchange} about my story.").status_code == 200
    finish = client.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "pending": 0, "document": "My story."})
    assert finish.json["next"] == f"/s/{session_id}/survey"

    final = _text(client.get(f"/s/{session_id}/survey").get_data(as_text=True))
    for question in ("What are the strengths of the AI writing assistant?",
                     "What are the weaknesses of the AI writing assistant?", "Why did you end the session?",
                     "Please rate your interaction experience (the conversation) with the AI writing assistant from 1 to 10 based on the following criteria:",
                     "Please rate the final document created by the AI writing assistant from 1 to 10 based on the following criteria:",
                     "Submit the Task", *END_REASONS, *INTERACTION_BANDS, *DOCUMENT_BANDS):  # fmt: skip
        assert question in final, question

    answers = {"strengths": "It asked good questions about my tone.", "weaknesses": "Some replies were too generic.",
               "end_reason": "I found the AI writing assistant not helpful.", "interaction_rating": "4",
               "document_rating": "5"}  # fmt: skip
    assert client.post(f"/s/{session_id}/survey", data=answers).location == f"/s/{session_id}/complete"
    with reading(app.extensions["study.engine"]) as connection:
        stored = {r["survey"]: r["answers"] for r in survey_store.for_session(connection, session_id)}
    assert stored["final"]["end_reason"] == "I found the AI writing assistant not helpful."


def test_a_proactive_study_asks_mindcopilot_s_questionnaire_in_the_paper_s_words(tmp_path):
    study = _init(tmp_path, "proactive")
    client = create_app(study, suggestion_engine=object()).test_client()
    session_id = start(client)
    to_writing(client, session_id, prompt=None)
    to_survey(client, session_id, proactive=True)

    coauthor = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=coauthor).status_code == 302  # CoAuthor's survey first
    page = client.get(f"/s/{session_id}/survey").get_data(as_text=True)
    text = _text(page)
    for item in TABLE12:
        assert item in text, item
    q1 = page[page.index('data-question="q1_mental_demand"') :].split("</fieldset>")[0]
    assert [_text(label).strip() for label in re.findall(r"<small>(.*?)</small>", q1)] == list(SCALE)
