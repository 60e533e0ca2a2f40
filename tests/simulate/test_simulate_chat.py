"""`study simulate` on a chat study (CollabLLM's user simulator): simulated chat users take the
chat study's real path over HTTP, and export, curation and status treat them like real ones."""

from __future__ import annotations

import csv
import json
import re

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.lm.backends import Generation
from study.lm.server import serve_in_thread
from study.paradigms.chat import store as chat_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.simulated import simulated_sessions


def test_simulated_chat_users_finish_and_the_pipeline_accepts_and_counts_them(suggestion_model, tmp_path):
    folder = tmp_path / "chat-pilot"
    # The participant-edited pane, so the users insert replies (the merged one: test below).
    write_study_files(folder, paradigm="chat", replacements={'document_pane = "merged"': 'document_pane = "edited"'})
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(folder), "--writers", "3",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output
    assert "8 exchanges" in result.output

    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        rows = connection.execute(select(simulated_sessions)).all()
        marks = {r.session_id for r in rows}
        chats = {s["session_id"]: chat_store.get(connection, s["session_id"]) for s in sessions}
    engine.dispose()
    assert len(sessions) == 3 and all(s["stage"] == "complete" and s["verification_code"] for s in sessions)
    assert marks == {s["session_id"] for s in sessions}
    assert {r.intent for r in rows} == {"one of the chat study's intents, chosen on its intent page"}
    assert all(row["intent"] and len(row["prewriting"]) >= 6 and row["chat_finished_at"] for row in chats.values())
    assert all(row["document"].strip() for row in chats.values())  # the document pane was edited

    status = runner.invoke(main, ["status", str(folder)]).output
    assert "Simulated sessions (study simulate, not people): 3" in status
    assert "Chat: 3 conversations, 24 exchanges" in status
    assert "periodic 6, final 3" in status  # a blocking rating after exchanges 3 and 6, each

    out = tmp_path / "out"
    exported = runner.invoke(main, ["export", str(folder), "--format", "chat", "--out", str(out)])
    assert exported.exit_code == 0 and "Exported 3 conversations (48 messages)" in exported.output
    records = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert all(r["finished"] and r["document"] and r["simulated"] is True for r in records)
    events = [e["eventName"] for r in records for e in r["events"]]
    assert events.count("system-initialize") == 3 and "chat-insert" in events and "survey-submit" in events
    table = tmp_path / "chat.csv"
    curated = runner.invoke(main, ["curate", "chat", str(out / "conversations.jsonl"), "--out", str(table)])
    assert curated.exit_code == 0 and "3 conversation(s) checked, 0 problem(s)" in curated.output
    rows = list(csv.DictReader(table.open()))
    assert [r["exchanges"] for r in rows] == ["8"] * 3 and all(r["rating_trajectory"] for r in rows)
    assert {r["simulated"] for r in rows} == {"True"}

    report = tmp_path / "report.html"
    for source in (folder, out):  # the study and its export say the same
        reported = runner.invoke(main, ["report", str(source), "--out", str(report)])
        assert reported.exit_code == 0, reported.output
        assert "3 of 3 sessions were written by simulated writers" in report.read_text()
        # Not "0 sessions (3 simulated), 3 chat conversations": a chat study's sessions are its conversations.
        assert f"Wrote {report}: 3 sessions, all chat conversations (3 simulated)\n" in reported.output


class ScriptedChatUserBackend:
    """A chat user's model that answers in JSON as an instruction-following model would: its
    first message names the intent from the system prompt, each later one quotes the start of
    the assistant's last reply; pre-writing and survey answers fit what is asked."""

    model_id = "scripted-chat-user"

    def generate(self, prompt: str, **_decoding) -> list[Generation]:
        system, asked = prompt[: prompt.rfind("User:")], prompt[prompt.rfind("User:"):]
        options = re.search(r"one of: (.*)\.\n", asked)
        if "Start the conversation" in asked:
            intent = re.search(r"Your intent: ([^:]+):", system).group(1)
            reply = {"message": f"Please help me write {intent} for {PERSONA}."}
        elif "The assistant's last reply" in asked:
            last = asked.split("<<<\n", 1)[1].split()[:3]
            reply = {"message": f"You said '{' '.join(last)}'; make it shorter."}
        elif "jot down" in asked:
            reply = {"answer": "It should sound like me, plain and honest, with one small story."}
        elif options:
            reply = {"answer": options.group(1).split(", ")[-1]}  # the highest point, the last choice
        else:
            reply = {"answer": "It helped me get a first draft done quickly."}
        text = json.dumps(reply)
        return [Generation(text, [0.0] * len(text), "stop", list(text))]

    def format_chat(self, messages) -> str:
        return "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


PERSONA = "a retired sailor"


def test_the_chat_users_messages_come_from_the_model_given_persona_intent_and_last_reply(
    suggestion_model, tmp_path
):
    folder = tmp_path / "chat-pilot"
    write_study_files(folder, paradigm="chat")
    base_url, stop = serve_in_thread(ScriptedChatUserBackend())
    try:
        result = CliRunner().invoke(main, [
            "simulate", str(folder), "--writers", "2", "--suggestions-endpoint", suggestion_model,
            "--llm-url", base_url, "--llm-model", "scripted-chat-user", "--persona", PERSONA,
        ])  # fmt: skip
    finally:
        stop()
    assert result.exit_code == 0, result.output
    decided = re.search(r"Decisions read from the model's answers: (\d+) of (\d+)", result.output)
    assert decided.group(1) == decided.group(2) != "0", result.output  # no fallback was needed

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["export", str(folder), "--format", "chat", "--out", str(out)]).exit_code == 0
    records = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        messages = record["messages"]
        assert messages[0]["content"] == f"Please help me write {record['intent']['title']} for {PERSONA}."
        for before, message in zip(messages[1::2], messages[2::2], strict=False):
            assert message["content"] == f"You said '{' '.join(before['content'].split()[:3])}'; make it shorter."
        assert all(r["answers"]["periodic_rating"] == 10 for r in record["ratings"])
        assert record["surveys"]["final"]["end_reason"] == "Other reason"  # and its follow-up answered
        assert record["surveys"]["final"]["end_reason_other"]


def test_a_chat_study_that_assigns_the_intent_is_simulated_too(suggestion_model, tmp_path):
    folder = tmp_path / "assigned"
    write_study_files(folder, paradigm="chat", replacements={'intent_selection = "choose"': 'intent_selection = "assign"'})
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "1",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "intent (assigned by the study), 8 exchanges" in result.output
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        (session,) = session_store.all_sessions(connection)
        row = chat_store.get(connection, session["session_id"])
    engine.dispose()
    assert session["stage"] == "complete" and row["intent"] == row["offered"][0]


def test_simulated_users_of_a_merged_document_see_it_grow_as_a_person_would(suggestion_model, tmp_path):
    """[chat] document_pane = "merged" (the default): the simulated page merges every reply as
    study/paradigms/chat/static/chat-document.js does, the users do not type into it, and the log replays to it."""
    from study.paradigms.chat.merge import merge
    from study.store import events as event_store
    from study.store.chat_tables import chat_events, chat_messages

    folder = tmp_path / "chat-pilot"
    write_study_files(folder, paradigm="chat")
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "2",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        for session in session_store.all_sessions(connection):
            session_id = session["session_id"]
            records = event_store.records(connection, session_id, chat_events)
            replies = connection.execute(
                select(chat_messages.c.seq, chat_messages.c.content)
                .where(chat_messages.c.session_id == session_id, chat_messages.c.role == "assistant")
                .order_by(chat_messages.c.seq)
            ).all()
            expected = ""
            for _, content in replies:
                expected = merge(expected, content)
            assert [r["messageSeq"] for r in records if r["eventName"] == "chat-merge"] == [seq for seq, _ in replies]
            assert {r["eventSource"] for r in records if r["eventName"].startswith("text-")} == {"api"}
            assert "chat-insert" not in {r["eventName"] for r in records}
            replayed, _ = chat_store.document_from_events(connection, session_id)
            assert expected and replayed == expected == chat_store.get(connection, session_id)["document"]
    engine.dispose()
