"""`study export --format chat` and `study curate chat`: the documented conversation format,
checked, and measured per conversation (turns, tokens, time, rating trajectory)."""

from __future__ import annotations

import csv
import json
import re

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.paradigms.chat.curation import count_tokens, read_conversations
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat
from tests.chat.test_chat_path import FINAL


def _conversation(client, code: str, exchanges: int = 8) -> str:
    session_id = start_chat(client, access_code=code)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    event = {"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1_700_000_000_000}
    typed = {"seq": 1, "eventName": "text-insert", "eventSource": "user", "eventTimestamp": 1_700_000_001_000,
             "textDelta": {"ops": [{"insert": "Draft."}]}}  # fmt: skip
    assert client.post(f"/api/sessions/{session_id}/chat/events", json={"events": [event, typed]}).status_code == 200
    for n in range(1, exchanges + 1):
        if n in (4, 7):
            rate(client, session_id, n - 1, value=n + 1)
        assert say(client, session_id, f"Point {n}: keep it short, please.").status_code == 200
    return session_id


def test_export_and_curate_a_chat_study(chat_client, chat_folder, tmp_path):
    done = _conversation(chat_client, "a")
    response = chat_client.post(f"/s/{done}/chat/finish", json={"last_seq": 1, "pending": 0, "document": "Draft."})
    assert response.status_code == 200, response.json
    assert chat_client.post(f"/s/{done}/survey", data=FINAL).location.endswith("/complete")
    unfinished = _conversation(chat_client, "b", exchanges=2)

    status = CliRunner().invoke(study_cli, ["status", str(chat_folder)]).output
    assert "Chat: 2 conversations, 10 exchanges, 4 page events stored" in status
    assert "Surveys (submitted, in progress): periodic 2, final 1" in status

    out = tmp_path / "out"
    result = CliRunner().invoke(study_cli, ["export", str(chat_folder), "--format", "chat", "--out", str(out)])
    assert result.exit_code == 0 and "Exported 1 conversations (16 messages)" in result.output
    result = CliRunner().invoke(study_cli, ["export", str(chat_folder), "--format", "chat", "--out", str(out), "--all"])
    assert "Exported 2 conversations (20 messages)" in result.output
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text(encoding="utf-8").splitlines()]
    record = next(r for r in lines if r["session_id"] == done)
    assert record["format"] == "study-chat-1" and record["finished"] is True and record["simulated"] is False
    assert record["assistant"]["label"] in "ABC" and len(record["prewriting"]) == 6
    assert [r["after_exchange"] for r in record["ratings"]] == [3, 6]
    assert record["surveys"]["final"]["end_reason_other"] == "I ran out of time"
    assert record["document"] == "Draft." and [e["eventName"] for e in record["events"]] == ["system-initialize", "text-insert"]
    assert "worker_id" not in json.dumps(record) and "access_code" not in json.dumps(record)
    survey = list(csv.DictReader((out / "survey.csv").open(encoding="utf-8")))
    assert {row["session_id"] for row in survey} == {done}  # the other has no answers yet
    assert survey[0]["periodic_rating@3"] == "5" and survey[0]["document_rating"] == "9"

    table = tmp_path / "chat.csv"
    result = CliRunner().invoke(study_cli, ["curate", "chat", str(out / "conversations.jsonl"), "--out", str(table)])
    assert result.exit_code == 0, result.output
    rows = {row["session_id"]: row for row in csv.DictReader(table.open(encoding="utf-8"))}
    row = rows[done]
    assert (row["exchanges"], row["user_messages"], row["assistant_messages"]) == ("8", "8", "8")
    assert row["user_tokens"] == str(8 * 9)  # "Point 1: keep it short, please." is 9 tokens
    assert row["rating_trajectory"] == "3:5 6:8"
    assert (row["final_interaction_rating"], row["final_document_rating"]) == ("8", "9")
    assert float(row["interaction_seconds"]) >= 0 and float(row["median_reply_seconds"]) >= 0
    assert rows[unfinished]["interaction_seconds"] == "" and rows[unfinished]["exchanges"] == "2"


def test_curate_chat_names_the_line_and_field_of_a_bad_conversation(chat_client, chat_folder, tmp_path):
    _conversation(chat_client, "c", exchanges=3)
    out = tmp_path / "out"
    CliRunner().invoke(study_cli, ["export", str(chat_folder), "--format", "chat", "--out", str(out), "--all"])
    path = out / "conversations.jsonl"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["messages"][1]["role"] = "user"
    broken = dict(record, ratings=[{"survey": "periodic", "after_exchange": 9, "answers": {}, "submitted_at": None}])
    del broken["document"]
    path.write_text("\n".join(json.dumps(r) for r in (record, broken)) + "\n", encoding="utf-8")
    report = read_conversations(path)
    assert report.problems == [
        f"{path} line 1: messages[1].role: expected assistant (turns alternate), got user",
        f"{path} line 2: record: 'document' is a required property",
    ]
    result = CliRunner().invoke(study_cli, ["curate", "chat", str(path)])
    assert result.exit_code == 1 and "1 conversation(s) checked, 2 problem(s)" in result.output


def test_the_documented_tokenizer():
    assert count_tokens("don't.") == 4 and count_tokens("Point 1: keep it short, please.") == 9
    assert count_tokens("  ") == 0 and count_tokens("Größe 42") == 2


def test_a_rating_after_an_exchange_that_never_happened_is_reported():
    from study.paradigms.chat.curation import consistency

    record = {"messages": [{"seq": 0, "role": "user"}, {"seq": 1, "role": "assistant"}],
              "ratings": [{"after_exchange": 3}]}  # fmt: skip
    assert consistency(record) == ["ratings[0].after_exchange: 3 but the conversation has 1 exchanges"]


def _finished_conversation(client) -> tuple[str, str]:
    """A finished conversation's session id and the intent its writer chose."""
    from study.paradigms.chat import store as chat_store
    from study.store import reading

    session_id = _conversation(client, "done")
    response = client.post(f"/s/{session_id}/chat/finish", json={"last_seq": 1, "pending": 0, "document": "Draft."})
    assert response.status_code == 200, response.json
    assert client.post(f"/s/{session_id}/survey", data=FINAL).location.endswith("/complete")
    with reading(client.application.extensions["study.engine"]) as connection:
        return session_id, chat_store.get(connection, session_id)["intent"]


def _export(folder, out):
    return CliRunner().invoke(study_cli, ["export", str(folder), "--format", "chat", "--out", str(out)])


def test_an_arm_renamed_after_its_conversations_is_named_and_nothing_is_written(chat_client, chat_folder, tmp_path):
    # The arms renamed in study.toml once conversations were stored under them: the export
    # stopped with a KeyError traceback, after it had made OUT.
    _finished_conversation(chat_client)
    path = chat_folder / "study.toml"
    text = path.read_text(encoding="utf-8")
    names = sorted(set(re.findall(r'^name = "([^"]+)"', text, flags=re.M)) & {c.name for c in config.load(chat_folder).conditions})
    for name in names:
        text = text.replace(f'name = "{name}"', f'name = "{name}-v2"')
    path.write_text(text, encoding="utf-8")

    result = _export(chat_folder, tmp_path / "out")

    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, KeyError), repr(result.exception)
    assert f"{path}: conditions: no entry with name = '" in result.output and "Fix: restore" in result.output
    assert not (tmp_path / "out").exists()


def test_an_intent_gone_from_the_intent_bank_is_named_and_nothing_is_written(chat_client, chat_folder, tmp_path):
    # The researcher copies the bank to edit it and drops the intent a writer had chosen: the
    # export stopped on a bare StopIteration.
    _, intent = _finished_conversation(chat_client)
    assert CliRunner().invoke(study_cli, ["chat", "copy-intents", str(chat_folder)]).exit_code == 0
    kind, index = intent.split("/")
    bank = chat_folder / "intents" / f"{kind}.toml"
    tables = bank.read_text(encoding="utf-8").split("[[intents]]")
    bank.write_text("[[intents]]".join(t for t in tables if f"\nindex = {index}\n" not in t), encoding="utf-8")
    path = chat_folder / "study.toml"
    path.write_text(path.read_text(encoding="utf-8").replace('intent_bank = ""', 'intent_bank = "intents"'), encoding="utf-8")

    result = _export(chat_folder, tmp_path / "out")

    assert result.exit_code == 1, result.output
    assert f"chat.intent_bank: no intent '{intent}', which 1 stored session(s) were given" in result.output
    assert not (tmp_path / "out").exists()
