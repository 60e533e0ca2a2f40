"""MindCopilot's within-subjects design (issue 21 item 2) on the general machinery of
`[design] assignment = "within"` (study.server.within): one participant writes once under each
paradigm, Tab (L0 as CoAuthor's list), L1, L2 and L3, in a Latin-square order counterbalanced
across participants, and each session's editor is its own paradigm's."""

from __future__ import annotations

import json
import tomllib

import tomli_w

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.server.within import latin_square
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.server.flow import INIT_EVENT, start, to_writing

PARADIGMS = ("tab", "L1", "L2", "L3")


def _mindcopilot_within(tmp_path) -> config.Study:
    folder = tmp_path / "mindcopilot-within"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    toml = folder / config.CONFIG_NAME
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    template = next(c for c in data["conditions"] if c.get("paradigm") != "none")
    data["conditions"] = [
        {**template, "name": f"creative-{paradigm}", "paradigm": paradigm, "n": 5 if paradigm == "tab" else 1}
        for paradigm in PARADIGMS
    ]
    toml.write_text(tomli_w.dumps(data), encoding="utf-8")
    return config.load(folder)


def _boot(page: str) -> dict:
    return json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])


def _finish(client, session_id: str, boot: dict) -> None:
    """From writing to the completion page, as the editor logs: in a MindCopilot study every
    record carries the extension (its paradigm is filled in by the server)."""
    event = {**INIT_EVENT, "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}
    if boot.get("extension"):
        event["proactive"] = {}
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": [event]}).status_code == 200
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    assert response.status_code == 200, response.json
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302


def test_each_writer_takes_every_paradigm_once_in_a_latin_square_order(tmp_path):
    study = _mindcopilot_within(tmp_path)
    assert study.assignment == "within"
    client = create_app(study, suggestion_engine=object()).test_client()
    taken: dict[str, list[str]] = {}
    editors: dict[str, dict] = {}
    writers = [f"w{n}" for n in range(len(PARADIGMS))]
    for code in writers:
        taken[code] = []
        for part in range(len(PARADIGMS)):
            session_id = start(client, access_code=code, **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)
            editors[session_id] = _boot(client.get(f"/s/{session_id}/writing").get_data(as_text=True))
            taken[code].append(session_id)
            _finish(client, session_id, editors[session_id])

    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        condition = {s["session_id"]: s["condition"] for s in session_store.all_sessions(connection)}
    engine.dispose()
    paradigm_of = {c.name: c.paradigm for c in study.conditions}
    orders = [[paradigm_of[condition[s]] for s in taken[code]] for code in writers]

    # Every writer wrote under every paradigm once; every paradigm came first, second, ... once
    # across the four writers: the order is counterbalanced, as the square the study uses.
    assert all(sorted(order) == sorted(PARADIGMS) for order in orders)
    for position in range(len(PARADIGMS)):
        assert sorted(order[position] for order in orders) == sorted(PARADIGMS)
    arms = [c.paradigm for c in study.conditions]
    assert orders == [[arms[i] for i in row] for row in latin_square(len(PARADIGMS))]

    # Each session's editor is its paradigm's: Tab's list, or one ghost text at a time whose
    # behaviour (not its name) the page is told: L2 and L3 carry the history, L3 adapts.
    for session_id, boot in editors.items():
        paradigm = paradigm_of[condition[session_id]]
        if paradigm == "tab":
            assert "suggestionsUrl" in boot and "proactive" not in boot
        else:
            assert boot["controls"]["currentN"] == "1"
            assert boot["proactive"]["stateful"] == (paradigm != "L1")
            assert boot["proactive"]["staged"] == (paradigm == "L3")
        # The page never names the writer's condition (the prompt's own text, the study's, may
        # hold any word: 'tab' in 'stable').
        assert paradigm not in json.dumps({**boot, "prompt": ""})
