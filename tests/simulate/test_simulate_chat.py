"""`study simulate` on a chat study (CollabLLM's user simulator): simulated chat users take the
chat study's real path over HTTP, and export, curation and status treat them like real ones."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.store import chat as chat_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.db import simulated_sessions


def test_simulated_chat_users_finish_and_the_pipeline_accepts_and_counts_them(suggestion_model, tmp_path):
    folder = tmp_path / "chat-pilot"
    write_study_files(folder, paradigm="chat")
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(folder), "--writers", "3",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output
    assert "8 exchanges" in result.output

    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        marks = {r.session_id for r in connection.execute(select(simulated_sessions))}
        chats = {s["session_id"]: chat_store.get(connection, s["session_id"]) for s in sessions}
    engine.dispose()
    assert len(sessions) == 3 and all(s["stage"] == "complete" and s["verification_code"] for s in sessions)
    assert marks == {s["session_id"] for s in sessions}
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
    assert all(r["finished"] and r["document"] for r in records)
    events = [e["eventName"] for r in records for e in r["events"]]
    assert events.count("system-initialize") == 3 and "chat-insert" in events and "survey-submit" in events
    table = tmp_path / "chat.csv"
    curated = runner.invoke(main, ["curate", "chat", str(out / "conversations.jsonl"), "--out", str(table)])
    assert curated.exit_code == 0 and "3 conversation(s) checked, 0 problem(s)" in curated.output
    rows = list(csv.DictReader(table.open()))
    assert [r["exchanges"] for r in rows] == ["8"] * 3 and all(r["rating_trajectory"] for r in rows)
