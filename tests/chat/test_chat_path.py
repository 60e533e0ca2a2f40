"""The chat document-creation study through the task server (CollabLLM App. E): assignment,
intent, pre-writing minimums, exchanges, the blocking rating, finishing and the final survey."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from dataclasses import replace

from study.server import create_app
from study.paradigms.chat import store as chat_store
from study.store import reading
from study.store import sessions as session_store
from study.store import surveys as survey_store
from study.store.db import suggestion_requests
from tests.chat.flow import ANSWER, CONFIRMED, choose_intent, prewrite, rate, say, start_chat

FINAL = {
    "strengths": "It asked good questions about my tone.",
    "weaknesses": "Some replies were too generic for me.",
    "end_reason": "Other reason",
    "end_reason_other": "I ran out of time",
    "interaction_rating": "8",
    "document_rating": "9",
}


def _db(app):
    return app.extensions["study.engine"]


def test_the_document_type_is_assigned_once_and_survives_reloads(chat_client, chat_app):
    session_id = start_chat(chat_client)
    first = chat_client.get(f"/s/{session_id}/intent").data.decode()
    label = re.search(r'data-testid="document-type">([^<]+)<', first).group(1)
    for _ in range(3):
        page = chat_client.get(f"/s/{session_id}/intent").data.decode()
        assert f'data-testid="document-type">{label}<' in page
        assert re.findall(r'value="([^"]+)"', page) == re.findall(r'value="([^"]+)"', first)
    with reading(_db(chat_app)) as connection:
        session = session_store.get(connection, session_id)
    assert session["condition"] in {"base", "proactive-base", "collabllm"}
    assert session["condition"] not in first  # the arm's name never reaches the browser
    response = chat_client.post(f"/s/{session_id}/intent", data={"intent": "made_up/99"})
    assert "Please choose one of the intents." in response.data.decode()


def test_prewriting_needs_six_answers_of_more_than_eight_words(chat_client, chat_app):
    session_id = start_chat(chat_client)
    choose_intent(chat_client, session_id)
    form = {f"q{n}": ANSWER for n in range(1, 6)}
    page = chat_client.post(f"/s/{session_id}/prewriting", data=form).data.decode()
    assert "Please answer at least 6 questions with at least 9 words each (you have 5)." in page
    page = chat_client.post(f"/s/{session_id}/prewriting", data={**form, "q6": "Too short, eight words, really, only eight here."}).data.decode()
    assert "Please write at least 9 words (you wrote 8)." in page
    # An own question counts like the intent's questions, but needs the question written down.
    page = chat_client.post(f"/s/{session_id}/prewriting", data={**form, "own1": ANSWER}).data.decode()
    assert "Please write the question you are answering." in page
    response = chat_client.post(
        f"/s/{session_id}/prewriting", data={**form, "own1": ANSWER, "own1_question": "Who reads it?"}
    )
    assert response.location == f"/s/{session_id}/chat"
    with reading(_db(chat_app)) as connection:
        notes = chat_store.get(connection, session_id)["prewriting"]
    assert len(notes) == 6 and notes[-1] == {"question": "Who reads it?", "answer": ANSWER, "added": True}


def test_a_whole_conversation_with_ratings_every_three_exchanges(chat_client, chat_app):
    session_id = start_chat(chat_client)
    choose_intent(chat_client, session_id)
    prewrite(chat_client, session_id)
    page = chat_client.get(f"/s/{session_id}/chat").data.decode()
    assert "Submit Periodic Evaluation" in page
    assert "The final document should ideally be 200–500 words." in page  # App. E's length target
    assert not re.search(r"Assistant [ABC]\b", page)  # no arm letter: the writer stays blind
    for exchange in range(1, 10):
        response = say(chat_client, session_id, f"Message number {exchange}, about my document.")
        if exchange in (4, 7):  # a rating is due after exchanges 3 and 6: nothing goes through
            assert response.status_code == 409
            assert response.json["owed"] == [{"survey": "periodic", "occasion": exchange - 1}]
            bad = rate(chat_client, session_id, exchange - 1, value=11)
            assert bad.status_code == 422 and bad.json["errors"] == {"periodic_rating": "Choose a point from 1 to 10."}
            assert rate(chat_client, session_id, exchange - 1, value=exchange).status_code == 200
            assert rate(chat_client, session_id, exchange - 1, value=1).json == {"saved": True, "duplicate": True}
            response = say(chat_client, session_id, f"Message number {exchange}, about my document.")
        assert response.status_code == 200, response.json
        assert response.json["exchanges"] == exchange and response.json["assistant"]["content"]
        if exchange == 7:
            early = chat_client.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "document": "d"})
            assert early.status_code == 409 and "at least 8 exchanges first (7 so far)" in early.json["error"]
        if exchange == 9:
            assert response.json["owed"] == [{"survey": "periodic", "occasion": 9}]
    # Not rating after the last exchange is allowed: the final survey covers it (spec B3).
    response = chat_client.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "pending": 0, "document": "My story."})
    assert response.json["next"] == f"/s/{session_id}/survey"
    page = chat_client.get(f"/s/{session_id}/survey").data.decode()
    assert "Final evaluation" in page and "9–10 very good" in page
    response = chat_client.post(f"/s/{session_id}/survey", data={**FINAL, "end_reason": "I found the AI writing assistant not helpful."})
    assert response.location == f"/s/{session_id}/complete"

    with reading(_db(chat_app)) as connection:
        messages = chat_store.messages(connection, session_id)
        chat = chat_store.get(connection, session_id)
        responses = survey_store.for_session(connection, session_id)
        calls = connection.execute(suggestion_requests.select()).mappings().all()
        session = session_store.get(connection, session_id)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 9
    assert len(calls) == 9 and all(json.loads(c["parameters"])["mode"] == "chat_reply" for c in calls)
    ratings = {(r["survey"], r["occasion"]): r["answers"] for r in responses}
    assert ratings[("periodic", 3)] == {"periodic_rating": 4} and ratings[("periodic", 6)] == {"periodic_rating": 7}
    assert "end_reason_other" not in ratings[("final", 0)]  # hidden: "Other reason" was not chosen
    assert ratings[("final", 0)]["document_rating"] == 9
    assert chat["document"] == "My story." and session["final_text"] == "My story."
    assert chat["assigned_at"] <= chat["intent_at"] <= chat["prewriting_at"] <= chat["chat_started_at"]
    assert chat["chat_started_at"] <= chat["chat_finished_at"] <= session["completed_at"]


def test_a_resent_message_is_stored_once_and_gets_the_same_reply(chat_client, chat_app):
    session_id = start_chat(chat_client)
    choose_intent(chat_client, session_id)
    prewrite(chat_client, session_id)
    client_id = uuid.uuid4().hex
    first = say(chat_client, session_id, "Hello there", client_id=client_id)
    again = say(chat_client, session_id, "Hello there", client_id=client_id)
    assert first.json == again.json
    with reading(_db(chat_app)) as connection:
        assert len(chat_store.messages(connection, session_id)) == 2


def test_a_failing_model_keeps_the_message_and_the_retry_answers_it(chat_study, chat_app, chat_client):
    session_id = start_chat(chat_client)
    choose_intent(chat_client, session_id)
    prewrite(chat_client, session_id)
    broken = create_app(
        replace(chat_study, suggestions=replace(chat_study.suggestions, endpoint="http://127.0.0.1:9/v1")),
        engine=_db(chat_app),
    ).test_client()
    response = say(broken, session_id, "Hello?", client_id="client-0001")
    assert response.status_code == 502 and "not available right now" in response.json["error"]
    assert "127.0.0.1" not in response.json["error"] and "endpoint" not in response.json["error"]
    state = chat_client.get(f"/api/sessions/{session_id}/chat/state").json
    assert state["pending_client_id"] == "client-0001" and state["exchanges"] == 0
    other = say(chat_client, session_id, "Something else")
    assert other.status_code == 409 and other.json["pending_client_id"] == "client-0001"
    retry = say(chat_client, session_id, "Hello?", client_id="client-0001")
    assert retry.status_code == 200 and retry.json["user"]["seq"] == 0 and retry.json["assistant"]["seq"] == 1


def test_assistants_and_document_types_are_balanced(chat_client, chat_app):
    for n in range(9):
        session_id = start_chat(chat_client, access_code=f"p{n}")
        chat_client.get(f"/s/{session_id}/intent")
    with reading(_db(chat_app)) as connection:
        sessions = session_store.all_sessions(connection)
        types = {s["session_id"]: chat_store.get(connection, s["session_id"])["document_type"] for s in sessions}
    assert Counter(s["condition"] for s in sessions) == {"base": 3, "proactive-base": 3, "collabllm": 3}
    for condition in ("base", "proactive-base", "collabllm"):
        assert len({types[s["session_id"]] for s in sessions if s["condition"] == condition}) == 3


def test_the_operator_notice_can_be_edited_while_the_study_runs(chat_folder, model_url):
    from study import config

    toml = chat_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('notice_file = ""', 'notice_file = "notice.txt"'), encoding="utf-8")
    (chat_folder / "notice.txt").write_text("AI generation is sped up 10x today.", encoding="utf-8")
    study = config.load(chat_folder)
    client = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url))).test_client()
    session_id = start_chat(client)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    assert "AI generation is sped up 10x today." in client.get(f"/s/{session_id}/chat").data.decode()
    (chat_folder / "notice.txt").write_text("Heavy traffic: replies may be slow.", encoding="utf-8")
    page = client.get(f"/s/{session_id}/chat").data.decode()
    assert "Heavy traffic: replies may be slow." in page and "10x" not in page


def test_an_assigned_intent_from_an_inline_bank_skips_the_choice(chat_folder, model_url):
    from study import config

    toml = chat_folder / "study.toml"
    text = toml.read_text(encoding="utf-8").replace('intent_selection = "choose"', 'intent_selection = "assign"')
    text = text.replace('intent_bank = ""', 'intent_bank = ""\nintents = [\n' + ",\n".join(
        f'  {{ type = "{t}", index = 7, title = "Only {t}", description = "The one {t} intent.", '
        f'questions = ["What is it about?"] }}'
        for t in ("blog_post", "creative_writing", "personal_statement")
    ) + "\n]")  # fmt: skip
    toml.write_text(text, encoding="utf-8")
    study = config.load(chat_folder)
    client = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url))).test_client()
    session_id = start_chat(client)
    response = client.get(f"/s/{session_id}/intent")
    assert response.location == f"/s/{session_id}/prewriting"
    page = client.get(response.location).data.decode()
    assert re.search(r'data-testid="intent">Only (blog_post|creative_writing|personal_statement)<', page)
    assert "What is it about?" in page


def test_every_chat_page_carries_the_participant_page_policy(chat_client):
    """The chat path's own pages (intent, pre-writing, chat) are participant pages too: scripts
    only from this server and framed only by MTurk, as the writing path's pages (README, Page
    policy); without the header any site could frame the chat and run its own script in it."""
    session_id = start_chat(chat_client)
    pages = {"intent": chat_client.get(f"/s/{session_id}/intent")}
    choose_intent(chat_client, session_id)
    pages["prewriting"] = chat_client.get(f"/s/{session_id}/prewriting")
    prewrite(chat_client, session_id)
    pages["chat"] = chat_client.get(f"/s/{session_id}/chat")
    consent = chat_client.get("/task", query_string={"access_code": "policy-2"}, follow_redirects=True)
    for stage, page in pages.items():
        assert page.status_code == 200, stage
        assert page.headers.get("Content-Security-Policy") == consent.headers["Content-Security-Policy"], stage
        assert "frame-ancestors" in page.headers["Content-Security-Policy"]
        assert page.headers.get("X-Content-Type-Options") == "nosniff", stage


def test_the_landing_page_needs_both_boxes_and_shows_the_operator_notice(chat_folder, chat_study):
    # CollabLLM App. E: "I agree that my annotations will be ... shared publicly" and "I have read
    # these notes carefully" are both required; the operator notice is read on every request.
    (chat_folder / "notice.txt").write_text("(Jan 20 18:00) Replies are 10x faster now.")
    study = replace(chat_study, chat=replace(chat_study.chat, notice_file=chat_folder / "notice.txt"))
    client = create_app(study).test_client()
    session_id = client.get("/task", query_string={"access_code": "landing"}).location.split("/")[2]
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    page = client.get(f"/s/{session_id}/instructions").data.decode()
    assert "shared publicly as research data" in page and "I have read these notes carefully." in page
    assert 'data-testid="operator-notice">(Jan 20 18:00) Replies are 10x faster now.' in page
    (chat_folder / "notice.txt").write_text("Slow replies mean heavy traffic; please be patient.")
    assert "heavy traffic" in client.get(f"/s/{session_id}/instructions").data.decode()
    refused = client.post(f"/s/{session_id}/instructions", data={"confirm1": "yes"})
    assert refused.status_code == 200 and "Please tick every box to continue." in refused.data.decode()
    assert client.post(f"/s/{session_id}/instructions", data=CONFIRMED).location == f"/s/{session_id}/intent"


def test_the_assistant_never_reads_the_prewriting_notes(chat_folder):
    """CollabLLM App. E: the pre-writing answers are the participant's own, viewable from the chat
    page; "the AI has no access to them". Every model call of the conversation leaves them out."""
    from study import config
    from study.lm.backends import DeterministicBackend
    from study.lm.server import serve_in_thread

    prompts = []

    class Recording(DeterministicBackend):
        def generate(self, prompt, **options):
            prompts.append(prompt)
            return super().generate(prompt, **options)

    base_url, stop = serve_in_thread(Recording())
    try:
        study = config.load(chat_folder)
        app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=base_url)))
        client = app.test_client()
        session_id = start_chat(client)
        choose_intent(client, session_id)
        prewrite(client, session_id)
        page = client.get(f"/s/{session_id}/chat").data.decode()
        assert ANSWER in page  # the participant can read their notes beside the chat
        for exchange in range(1, 4):
            assert say(client, session_id, f"Draft the opening, take {exchange}.").status_code == 200
        _db(app).dispose()
    finally:
        stop()
    assert len(prompts) >= 3 and all("Draft the opening, take 1." in p for p in prompts)
    assert not any(ANSWER in p or "warm and honest tone" in p for p in prompts)
