"""CollabLLM's user simulator (App. C.1; spec B4.2; issue 22 item 5): a simulated chat user
reads the whole conversation, holds the goal document it wants, ends the chat with the
termination marker when satisfied (never before the study's minimum) or stops at the turn
limit; why each conversation ended is recorded, exported, and `study report` sets simulated
beside human conversations per assistant."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.lm.backends import Generation
from study.lm.server import serve_in_thread
from study.server import create_app
from study.store import make_engine, reading
from study.store.simulated import simulated_conversations
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat

MARKER = "[[TERMINATE CHAT]]"


class GoalSeekingUserBackend:
    """A users' model that answers as CollabLLM's simulator: each message names its exchange,
    quotes the conversation's first user message (it remembers the whole chat) and the first
    line of its goal document; it sends the marker once the conversation has as many exchanges
    as its persona says ("ends after N"), and carries on when told the study needs more."""

    model_id = "goal-seeking-user"

    def generate(self, prompt: str, **_decoding) -> list[Generation]:
        system, asked = prompt[: prompt.rfind("User:")], prompt[prompt.rfind("User:"):]
        options = re.search(r"one of: (.*)\.\n", asked)
        if "<conversation>" in asked:
            conversation = asked.split("<conversation>\n", 1)[1].split("\n</conversation>", 1)[0]
            goal = asked.split("<goal document>\n", 1)[1].split("\n", 1)[0]
            done = conversation.count("USER: ")
            first = re.search(r"USER: (First request[^\n]*)", conversation)
            limit = re.search(r"Persona: ends after (\d+)", system)
            if limit and done >= int(limit.group(1)) and "do not end yet" not in asked:
                reply = {"current_answer": "a draft", "thought": f"satisfied after {done}", "response": MARKER}
            elif done == 0:
                reply = {"current_answer": "", "thought": "start", "response": f"First request, aiming at {goal}."}
            else:
                reply = {"current_answer": "a draft", "thought": f"not yet at {done}",
                         "response": f"Exchange {done + 1}; I said: {first.group(1)}"}  # fmt: skip
        elif "jot down" in asked:
            reply = {"answer": "It should sound like me, plain and honest, with one small story."}
        elif options:
            reply = {"answer": options.group(1).split(", ")[-1]}
        else:
            reply = {"answer": "It helped me get a first draft done."}
        text = json.dumps(reply)
        return [Generation(text, [0.0] * len(text), "stop", list(text))]

    def format_chat(self, messages) -> str:
        return "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _human_conversation(folder, model_url) -> None:
    study = config.load(folder)
    client = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url))).test_client()
    session_id = start_chat(client, access_code="person-1")
    choose_intent(client, session_id)
    prewrite(client, session_id)
    for n in range(1, 9):
        assert say(client, session_id, f"Human point {n}.").status_code == 200
        if n in (3, 6):
            assert rate(client, session_id, n).status_code == 200
    client.post(f"/s/{session_id}/chat/finish", json={"last_seq": -1, "pending": 0, "document": "Mine."})
    final = {"strengths": "It asked good questions.", "weaknesses": "Some replies were generic.",
             "end_reason": "I found the AI writing assistant not helpful.", "interaction_rating": "4", "document_rating": "5"}  # fmt: skip
    assert client.post(f"/s/{session_id}/survey", data=final).location.endswith("/complete")


def test_simulated_users_remember_hold_a_goal_and_end_when_satisfied(suggestion_model, model_url, tmp_path):
    folder = tmp_path / "chat-pilot"
    write_study_files(folder, paradigm="chat", replacements={
        "max_exchanges = 16": "max_exchanges = 12", 'goal_documents = ""': 'goal_documents = "goals"'})  # fmt: skip
    (folder / "goals").mkdir()
    for intent in config.load(folder).chat.intents:
        (folder / "goals" / f"{intent.type}-{intent.index}.txt").write_text(f"GOAL-{intent.index}\nThe rest.\n")
    _human_conversation(folder, model_url)
    base_url, stop = serve_in_thread(GoalSeekingUserBackend())
    try:
        result = CliRunner().invoke(main, [
            "simulate", str(folder), "--writers", "3", "--parallel", "1", "--suggestions-endpoint", suggestion_model,
            "--llm-url", base_url, "--llm-model", "goal-seeking-user",
            "--persona", "ends after 10", "--persona", "ends after 4", "--persona", "never ends",
            "--beside-people",  # the human conversation above, for the report's comparison
        ])  # fmt: skip
    finally:
        stop()
    assert result.exit_code == 0, result.output
    assert "10 exchanges (ended: termination marker; goal: file)" in result.output
    assert "8 exchanges (ended: termination marker; goal: file)" in result.output  # not before the minimum
    assert "12 exchanges (ended: turn limit; goal: file)" in result.output

    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        recorded = {r.exchanges: r for r in connection.execute(select(simulated_conversations))}
    engine.dispose()
    assert recorded[10].first_wish_to_end == 10 and recorded[10].last_thought == "satisfied after 10"
    assert recorded[8].first_wish_to_end == 4  # asked to carry on until the study's 8
    assert recorded[12].end_reason == "turn_limit" and recorded[12].first_wish_to_end is None

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["export", str(folder), "--format", "chat", "--out", str(out)]).exit_code == 0
    records = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    simulated = [r for r in records if r["simulated"]]
    assert len(simulated) == 3 and "simulation" not in next(r for r in records if not r["simulated"])
    for record in simulated:
        goal = f"GOAL-{record['intent']['key'].split('/')[1]}"
        assert record["simulation"]["goal_document"] == f"{goal}\nThe rest."
        users = [m["content"] for m in record["messages"] if m["role"] == "user"]
        assert users[0] == f"First request, aiming at {goal}."
        # Every later message quotes the first: the user read the whole conversation.
        assert all(u.endswith(f"I said: First request, aiming at {goal}.") for u in users[1:]), users
        assert MARKER not in " ".join(users)
        # The final survey was answered knowing how the chat ended.
        assert record["surveys"]["final"]["end_reason"]
    table = tmp_path / "chat.csv"
    assert CliRunner().invoke(main, ["curate", "chat", str(out / "conversations.jsonl"), "--out", str(table)]).exit_code == 0
    curated = list(csv.DictReader(table.open()))
    ends = sorted(r["simulated_end_reason"] for r in curated)
    assert ends == ["", "termination_marker", "termination_marker", "turn_limit"]
    # Table 1's Doc BLEU against each user's goal file; a person has no goal to score against.
    assert sorted(r["simulated"] for r in curated if r["bleu_char"]) == ["True"] * 3

    report = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(folder), "--out", str(report)]).exit_code == 0
    html = report.read_text()
    assert "Simulated and human conversations" in html
    section = html.split("Simulated and human conversations", 1)[1]
    assert section.count(">people<") == 3 and section.count(">simulated<") == 3  # per assistant
    assert "ended by the user (marker): 1" in section and "turn limit: 1" in section
    assert "Simulated conversations as CollabLLM's Table 1" in section
