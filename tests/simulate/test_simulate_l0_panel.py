"""`study simulate` pilots MindCopilot's L0 as the assistant panel ([proactive] l0 = "assistant"):
its simulated writers ask the panel through its API, copy a passage of a response and paste it
into their text, logged as static/editor-assistant.js logs it, so a pilot shows the panel's use
in the logs, in the report's Table 5, and passes `study curate validate`."""

from __future__ import annotations

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


def _study(tmp_path, as_l0=("L1",)):
    """`study init --paradigm proactive` with its conditions of `as_l0` as L0's assistant panel
    (whose model answers in chat mode), beside the others."""
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
    toml.write_text("[[conditions]]".join(blocks) + '\n[proactive]\nl0 = "assistant"\n')
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


@pytest.mark.parametrize("as_l0", [("L1",), ("L1", "L2", "L3")], ids=["beside-ghost-text", "l0-alone"])
def test_with_a_writers_model_that_gives_no_json_every_l0_writer_still_asks_the_panel(tmp_path, suggestion_model,
                                                                                      as_l0):
    """The deterministic writers' model answers in sentences: how often to ask is the persona's
    and the seed's, and an L0 writer who would never ask asks once before finishing. A study of
    L0 alone takes the writing path's participant, whose records carry `proactive` as the
    page's boot data says (it stopped on a TypeError)."""
    folder = _study(tmp_path, as_l0)
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "4",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
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
    assert CliRunner().invoke(main, ["curate", "validate", str(folder)]).exit_code == 0
