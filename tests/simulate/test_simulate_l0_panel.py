"""`study simulate` pilots MindCopilot's L0 as the assistant panel ([proactive] l0 = "assistant"):
its simulated writers ask the panel through its API, copy a passage of a response and paste it
into their text, logged as static/editor-assistant.js logs it, so a pilot shows the panel's use
in the logs, in the report's Table 5, and passes `study curate validate`."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main
from study.lm.backends import Generation
from study.store import events as event_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.db import suggestion_requests
from tests.report.conftest import Tables, number
from tests.simulate.conftest import ScriptedWriterBackend, inserted, pilot

REQUEST = "Could you suggest what the keeper finds in the cellar?"


class PanelWriterBackend(ScriptedWriterBackend):
    """The scripted writer, who asks the panel REQUEST and copies the first sentence of each
    response, as the response has it (and takes every ghost text)."""

    def generate(self, prompt: str, **decoding) -> list[Generation]:
        asked = prompt[prompt.rfind("User:") :]
        if "You open the chat assistant" in asked:
            reply = {"message": REQUEST}
        elif "The chat assistant replies" in asked:
            said = asked.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
            reply = {"copy": (re.findall(r"[^.!?]+[.!?]", said)[:1] or [said])[0].strip()}
        elif "in grey after your text" in asked:
            reply = {"react": "accept"}
        else:
            return super().generate(prompt, **decoding)
        text = json.dumps(reply)
        return [Generation(text, [0.0] * len(text), "stop", list(text))]


def _study(tmp_path, as_l0=("L1",), insert_button=False):
    """`study init --paradigm proactive` with its conditions of `as_l0` as L0's assistant panel
    (whose model answers in chat mode), beside the others; the panel's "Insert at cursor"
    button with `insert_button`."""
    folder = tmp_path / "l0"
    result = CliRunner().invoke(main, ["init", str(folder), "--paradigm", "proactive"])
    assert result.exit_code == 0, result.output
    toml = folder / "study.toml"
    text = toml.read_text().replace("min_seconds = 600", "min_seconds = 1")
    blocks = text.split("[[conditions]]")
    for n, block in enumerate(blocks):
        for level in as_l0:
            if f'paradigm = "{level}"' in block:
                blocks[n] = block.replace(f'paradigm = "{level}"', 'paradigm = "L0"').replace('mode = "completion"', 'mode = "chat"')
    button = "insert_button = true\n" if insert_button else ""
    toml.write_text("[[conditions]]".join(blocks) + f'\n[proactive]\nl0 = "assistant"\n{button}')
    assert {c.paradigm for c in config.load(folder).conditions} == {"L0", *{"L1", "L2", "L3"} - set(as_l0)}
    return folder



def test_an_l0_pilots_writers_ask_the_panel_paste_from_it_and_validate(tmp_path, suggestion_model):
    folder = _study(tmp_path)
    result = pilot(folder, PanelWriterBackend(), writers=4, model="panel", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    assert "4 simulated session(s) finished, 0 stopped" in result.output

    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = [s for s in session_store.all_sessions(connection)
                    if study.condition(s["condition"]).paradigm == "L0"]  # fmt: skip
        logs = {s["session_id"]: event_store.records(connection, s["session_id"]) for s in sessions}
        answered = {row.id: (row.session_id, json.loads(row.suggestions)[0]["original"], row.model)
                    for row in connection.execute(suggestion_requests.select()) if row.error is None}  # fmt: skip
    engine.dispose()
    assert logs, "a pilot of 4 writers in rotation has an L0 session"
    requests = {}
    for session_id, records in logs.items():
        assert all(r["proactive"]["paradigm"] == "L0" for r in records)
        names = [r["eventName"] for r in records]
        assert "suggestion-get" not in names  # no Tab list on L0's page
        sends = [r for r in records if r["eventName"] == "chat-send"]
        receives = [r for r in records if r["eventName"] == "chat-receive"]
        assert sends and {r["proactive"]["text"] for r in sends} == {REQUEST}
        assert len(receives) == len(sends) and "suggestion-fail" not in names
        requests[session_id] = len(sends)
        for receive in receives:
            # The response the study's model gave this session, as the server recorded it.
            chat_id = receive["proactive"]["chatId"]
            assert answered[chat_id][:2] == (session_id, receive["proactive"]["text"]) and answered[chat_id][2]
        # Copied from a response, then pasted in the editor: one user insert naming its response.
        copies = [r for r in records if r["eventName"] == "chat-copy"]
        pastes = [r for r in records if r["eventName"] == "text-insert" and r["proactive"].get("paste")]
        assert copies and len(pastes) == len(copies)
        for copy, paste in zip(copies, pastes):
            assert paste["eventSource"] == "user" and inserted(paste) == copy["proactive"]["text"]
            assert paste["proactive"]["chatId"] == copy["proactive"]["chatId"]
            assert copy["proactive"]["text"] in answered[copy["proactive"]["chatId"]][1]
        focus = [r["proactive"]["panel"] for r in records if r["eventName"] == "panel-focus"]
        assert focus == ["assistant", "editor"] * len(sends)
        # The panel's records in the page's order: the copy in the panel, the paste in the editor.
        first = names.index("chat-copy")
        assert names[first - 1 : first + 2] == ["chat-receive", "chat-copy", "panel-focus"]

    # The report's Table 5 counts them: the moves between editor and panel, and the requests.
    out = tmp_path / "report.html"
    reported = CliRunner().invoke(main, ["report", str(folder), "--out", str(out), "-j", "1"])
    assert reported.exit_code == 0, reported.output
    tables = Tables(out.read_text(encoding="utf-8"))
    heading = tables.sections["proactive"][2][0]
    l0 = tables.rows("proactive", 2)["L0"]
    mean_requests = sum(requests.values()) / len(requests)
    assert number(l0[heading.index("assistant requests") - 1]) == round(mean_requests, 2)
    assert number(l0[heading.index("panel switches") - 1]) == round(2 * mean_requests, 2)

    # The stored sessions hold to what the server answered, and the extended export validates.
    assert CliRunner().invoke(main, ["curate", "validate", str(folder)]).exit_code == 0
    exported = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(exported)])
    assert result.exit_code == 0, result.output
    validated = CliRunner().invoke(main, ["curate", "validate", str(exported), "--format", "json"])
    found = json.loads(validated.output)
    problems = [i["message"] for s in found["sessions"] for i in s["issues"] if i["severity"] == "error"]
    assert validated.exit_code == 0 and problems == [], problems


@pytest.mark.parametrize("as_l0, button", [(("L1",), False), (("L1", "L2", "L3"), False), (("L1", "L2", "L3"), True)],
                         ids=["beside-ghost-text", "l0-alone", "l0-alone-with-insert-at-cursor"])  # fmt: skip
def test_with_a_writers_model_that_gives_no_json_every_l0_writer_still_asks_the_panel(tmp_path, suggestion_model,
                                                                                      as_l0, button):
    """The deterministic writers' model answers in sentences: how often to ask is the persona's
    and the seed's, and an L0 writer who would never ask asks once before finishing. A study of
    L0 alone takes the writing path's participant, whose records carry `proactive` as the
    page's boot data says (it stopped on a TypeError). Where the panel has Insert at cursor,
    the personas' habits press it for some of the responses they take (`insert_rate`) and
    copy a passage of others."""
    folder = _study(tmp_path, as_l0, insert_button=button)
    # One writer at a time where the button is on: the prompts drawn, so the text the
    # deterministic model writes and the seeded habits' draws, do not depend on thread timing.
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "4", "--suggestions-endpoint",
                                       suggestion_model, *(["--parallel", "1"] if button else [])])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 simulated session(s) finished, 0 stopped" in result.output
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        logs = [event_store.records(connection, s["session_id"]) for s in session_store.all_sessions(connection)
                if study.condition(s["condition"]).paradigm == "L0"]  # fmt: skip
    engine.dispose()
    assert logs
    for records in logs:
        names = [r["eventName"] for r in records]
        assert names.count("chat-send") >= 1 and names.count("chat-receive") == names.count("chat-send")
        assert all(r["proactive"]["text"].strip() for r in records if r["eventName"] == "chat-send")
    taken = [r["proactive"] for records in logs for r in records if r["eventName"] == "text-insert"
             and r["eventSource"] == "user" and "chatId" in r["proactive"]]  # fmt: skip
    if button:  # 4 writers of the seeded personas, one at a time: some responses each way
        assert any(p.get("insert") for p in taken) and any(p.get("paste") for p in taken), taken
    else:
        assert not any(p.get("insert") for p in taken)
    assert CliRunner().invoke(main, ["curate", "validate", str(folder)]).exit_code == 0


class ButtonWriterBackend(PanelWriterBackend):
    """The panel writer, who presses Insert at cursor under every response that has it."""

    def generate(self, prompt: str, **decoding) -> list[Generation]:
        if "Insert at cursor" in prompt[prompt.rfind("User:") :]:
            text = json.dumps({"insert": True})
            return [Generation(text, [0.0] * len(text), "stop", list(text))]
        return super().generate(prompt, **decoding)


def _l0_logs(folder) -> dict[str, list[dict]]:
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        logs = {s["session_id"]: event_store.records(connection, s["session_id"])
                for s in session_store.all_sessions(connection) if study.condition(s["condition"]).paradigm == "L0"}
    engine.dispose()
    return logs


def test_with_insert_at_cursor_on_pilot_writers_press_it_and_curate_counts_the_text_as_the_assistants(
        tmp_path, suggestion_model):  # fmt: skip
    """A pilot pilots the button real writers use: its text-inserts are logged as the page logs
    the button's (chatId, insert: true; no copy, no paste), they validate, and `study curate
    stats` counts the inserted responses in the assistant's share of the text."""
    folder = _study(tmp_path, ("L1", "L2", "L3"), insert_button=True)
    result = pilot(folder, ButtonWriterBackend(), writers=2, model="panel", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    assert "2 simulated session(s) finished, 0 stopped" in result.output

    logs = _l0_logs(folder)
    assert len(logs) == 2
    assistant_chars = {}
    for session_id, records in logs.items():
        names = [r["eventName"] for r in records]
        responses = {r["proactive"]["chatId"]: r["proactive"]["text"]
                     for r in records if r["eventName"] == "chat-receive"}
        pressed = [r for r in records if r["proactive"].get("insert")]
        assert responses and len(pressed) == len(responses)
        for insert in pressed:
            at = records.index(insert)
            # The button's click: the focus back in the editor, then all of the response at the caret.
            assert insert["eventName"] == "text-insert" and insert["eventSource"] == "user"
            assert inserted(insert) == responses[insert["proactive"]["chatId"]]
            assert "paste" not in insert["proactive"]
            assert records[at - 1]["eventName"] == "panel-focus" and records[at - 1]["proactive"]["panel"] == "editor"
            assert records[at - 2]["eventName"] == "chat-receive"
        assert "chat-copy" not in names and not [r for r in records if r["proactive"].get("paste")]
        assistant_chars[session_id] = sum(len(inserted(r)) for r in pressed)
    assert CliRunner().invoke(main, ["curate", "validate", str(folder)]).exit_code == 0

    exported = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(exported)])
    assert result.exit_code == 0, result.output
    stats = CliRunner().invoke(main, ["curate", "stats", str(exported)])
    assert stats.exit_code == 0, stats.output
    rows = {row["session_id"]: row for row in csv.DictReader(io.StringIO(stats.stdout))}
    for session_id, records in logs.items():
        row = rows[session_id]
        # The writers only type at the end and delete their own typos: every inserted response
        # survives, and the rest of what follows the prompt is typed.
        written = sum(len(inserted(r)) for r in records if r["eventName"] == "text-insert")
        deleted = sum(1 for r in records if r["eventName"] == "text-delete")
        expected = 100 * assistant_chars[session_id] / (written - deleted)
        assert float(row["assistant_share"]) == pytest.approx(expected, abs=0.01), row
        assert float(row["outside_share"]) == 0.0 and row["outside_inserts"] == "0"


def test_without_the_setting_no_pilot_writer_presses_a_button(tmp_path, suggestion_model):
    # The writers' model would press it wherever it is offered: the page without it offers none.
    folder = _study(tmp_path, ("L1", "L2", "L3"))
    result = pilot(folder, ButtonWriterBackend(), writers=2, model="panel", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    for records in _l0_logs(folder).values():
        assert not [r for r in records if r["proactive"].get("insert")]
        assert [r for r in records if r["proactive"].get("paste")]
