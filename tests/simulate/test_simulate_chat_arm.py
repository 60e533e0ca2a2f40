"""`study simulate` pilots a writing study's chat arm (`paradigm = "chat"`, study.paradigms.chat.arm):
its simulated writers ask the panel beside the editor through the panel's API, paste a passage
of a reply into their text as a person copies one, and the pilot's conversations are stored,
marked simulated, read as the assistant's text, and released with `"simulated": true`."""

from __future__ import annotations

import csv
import json
import re

from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.curation.origin import origin
from study.lm.backends import Generation
from study.paradigms.chat import arm
from study.paradigms.chat import store as chat_store
from study.paradigms.chat.arm_simulate import passage
from study.release.cli import release
from study.release.keys import init_keyfile
from study.store import events as event_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.simulated import simulated_ids
from tests.conftest import CONTACT
from tests.simulate.conftest import ScriptedWriterBackend, inserted, pilot

MESSAGE = "Could you give me an idea for what the keeper does next?"


class ChatArmWriterBackend(ScriptedWriterBackend):
    """The scripted writer, who in a chat arm asks the panel MESSAGE and copies the first two
    sentences of each reply, as the reply has them (and takes every ghost text)."""

    def generate(self, prompt: str, **decoding) -> list[Generation]:
        asked = prompt[prompt.rfind("User:") :]
        if "You open the chat assistant" in asked:
            reply = {"message": MESSAGE}
        elif "The chat assistant replies" in asked:
            said = asked.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
            reply = {"copy": "".join(re.findall(r"[^.!?]+[.!?]", said)[:2]).strip() or said}
        elif "in grey after your text" in asked:  # the ghost-text arm's writer
            reply = {"react": "accept"}
        else:
            return super().generate(prompt, **decoding)
        text = json.dumps(reply)
        return [Generation(text, [0.0] * len(text), "stop", list(text))]


def _study(tmp_path, paradigm_of_the_autocomplete_arm: str = "L1"):
    folder = tmp_path / "pilot"
    write_study_files(folder, design="realhumaneval", replacements={"min_seconds = 600": "min_seconds = 1", **CONTACT})
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace('paradigm = "L1"', f'paradigm = "{paradigm_of_the_autocomplete_arm}"'))
    return folder


def _released(folder, tmp_path):
    """The study's release 1.0.0, built as a curator builds it."""
    key = init_keyfile(tmp_path / "keys" / "study.key")
    built = CliRunner().invoke(release, ["build", str(folder), "--version", "1.0.0", "--out",
                                         str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    return tmp_path / "releases" / "realhumaneval-1.0.0"


def _chat_sessions(folder):
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        marked = simulated_ids(connection)
        found = {
            sid: (chat_store.messages(connection, sid), event_store.records(connection, sid))
            for sid in (s["session_id"] for s in sessions if arm.is_chat_arm(study.condition(s["condition"])))
        }
    engine.dispose()
    return sessions, marked, found



def test_a_realhumaneval_pilots_chat_arm_asks_the_panel_pastes_a_reply_and_is_released(tmp_path, suggestion_model):
    folder = _study(tmp_path)
    result = pilot(folder, ChatArmWriterBackend(), writers=3, model="chat-arm", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output

    sessions, marked, chats = _chat_sessions(folder)
    assert chats, "a realhumaneval pilot of 3 writers has a chat-arm session"
    assert all(s["stage"] == "complete" and s["session_id"] in marked for s in sessions)
    for session_id, (messages, records) in chats.items():
        # The writer's messages, each answered by the study's model, in turn.
        assert [m["role"] for m in messages] == ["user", "assistant"] * (len(messages) // 2) and messages
        assert {m["content"] for m in messages if m["role"] == "user"} == {MESSAGE}
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        assert all(replies) and {m["model"] for m in messages if m["role"] == "assistant"} == {"deterministic"}
        # Pasted, not typed: one user insert of a passage a reply holds, as the editor logs a paste.
        pasted = [inserted(r) for r in records if r["eventName"] == "text-insert" and r["eventSource"] == "user"
                  and len(inserted(r)) > 1]  # fmt: skip
        assert pasted and all(any(text in reply for reply in replies) for text in pasted)
        # The report reads the pasted text as the assistant's (study.paradigms.chat.arm_report).
        found = origin(records, assistant_texts=replies)
        assert found.assistant > 0 and found.outside == 0, found

    # `study export` carries the conversations beside the logs.
    out = tmp_path / "export"
    exported = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    lines = [json.loads(line) for line in (out / "chat-arm-conversations.jsonl").read_text().splitlines()]
    assert {line["session_id"] for line in lines} == set(chats)
    # `study report` of that folder reads the file as the chat arm's, not as a session it could not read.
    reported = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "r.html"), "-j", "1"])
    assert reported.exit_code == 0 and "unreadable" not in reported.output, reported.output

    # The release publishes them, each saying a simulated writer wrote it.
    directory = _released(folder, tmp_path)
    records = [json.loads(line) for line in (directory / "conversations.jsonl").read_text().splitlines()]
    rows = {r["session_id"]: r for r in csv.DictReader((directory / "metadata.csv").open(encoding="utf-8"))}
    assert len(records) == len(chats)
    for record in records:
        assert record["simulated"] is True and rows[record["session_id"]]["simulated"] == "true"
        assert record["messages"][0] == {**record["messages"][0], "role": "user", "content": MESSAGE}
        assert [m["role"] for m in record["messages"]][:2] == ["user", "assistant"]


def test_a_pilot_of_a_tab_arm_beside_a_chat_arm_asks_the_panel_by_the_personas_habits(tmp_path, suggestion_model):
    """No ghost-text arm: the chat study's own participant is not taken for the writing study
    (it stopped on the missing [chat] table), and with the deterministic writers' model (no
    JSON) every writer still asks the AI at least once, the chat-arm writer at the panel."""
    folder = _study(tmp_path, "L0")
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "3",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output
    sessions, marked, chats = _chat_sessions(folder)
    assert chats and all(s["session_id"] in marked for s in sessions)
    for messages, _records in chats.values():
        assert [m["role"] for m in messages][:2] == ["user", "assistant"]
        assert all(m["content"].strip() for m in messages)


def test_a_copied_passage_is_the_replys_own_text_from_its_start_to_a_sentences_end():
    reply = "  Try a storm. The keeper climbs the stairs!\nThen the light fails."
    assert passage(reply, 1) == "Try a storm."
    assert passage(reply, 2) == "Try a storm. The keeper climbs the stairs!"
    assert passage(reply, 5) == "Try a storm. The keeper climbs the stairs!\nThen the light fails."
    long = "word " * 300 + "end."
    assert len(passage(long, 1)) <= 600 and passage(long, 1) in long and not passage(long, 1).endswith(" ")
    assert passage("", 1) == ""


def test_a_chat_arm_changed_to_tab_in_study_toml_keeps_its_sessions_conversations_and_report(tmp_path, suggestion_model):
    """The arm's name kept for Tab lists after the pilot: `study export` still writes its sessions'
    conversations, and `study report` still reads their pasted replies as the assistant's."""
    from tests.export.test_paradigm_changed_under_its_name import _set_paradigm
    from tests.report.conftest import Tables

    folder = _study(tmp_path)
    result = pilot(folder, ChatArmWriterBackend(), writers=3, model="chat-arm", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    _, _, chats = _chat_sessions(folder)
    assert chats
    (chat_arm,) = {c.name for c in config.load(folder).conditions if arm.is_chat_arm(c)}

    def report(name: str) -> Tables:
        out = tmp_path / f"{name}.html"
        reported = CliRunner().invoke(main, ["report", str(folder), "--out", str(out), "-j", "1"])
        assert reported.exit_code == 0, reported.output
        return Tables(out.read_text(encoding="utf-8"))

    before = report("before")
    _set_paradigm(folder, chat_arm, "tab")
    after = report("after")
    assert after.sections["origin"] == before.sections["origin"]

    out = tmp_path / "export"
    exported = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    lines = [json.loads(line) for line in (out / "chat-arm-conversations.jsonl").read_text().splitlines()]
    assert {line["session_id"] for line in lines} == set(chats)
    assert {line["condition"] for line in lines} == {chat_arm}

    # The release publishes them too, as the chat arm's they were.
    directory = _released(folder, tmp_path)
    records = [json.loads(line) for line in (directory / "conversations.jsonl").read_text().splitlines()]
    assert len(records) == len(chats) and {r["condition"] for r in records} == {chat_arm}
