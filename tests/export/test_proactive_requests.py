"""The per-suggestion record from the files alone (issue 21, item 4): `study export --format
proactive` writes what the model saw for each suggestion (suggestion_requests.json), and `study
curate proactive`'s suggestions.csv carries s_t (the L1 window or the L2 snapshot), a_t, u_t and
s_t+1, so HAR, KED and App. G's RL triples are rebuilt without the study database."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.paradigms.proactive.curation.requests import RequestsFileError, read_requests
from tests.curation.proactive_session import Script
from tests.server.flow import start, to_writing

PARADIGMS = {"creative-low": "L1", "creative-high": "L2"}


@pytest.fixture
def exported(tmp_path: Path, model_url: str) -> tuple[Path, dict[str, str]]:
    from study.server import create_app
    from study.store import sessions as session_store
    from study.store import writing

    replacements = {"min_seconds = 600": "min_seconds = 0", 'mode = "completion"\n': 'mode = "chat"\n'}
    for name, paradigm in PARADIGMS.items():
        replacements[f'name = "{name}"\n'] = f'name = "{name}"\nparadigm = "{paradigm}"\n'
    folder = tmp_path / "study"
    write_study_files(folder, replacements=replacements)
    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    sessions = {}
    for n, (condition, paradigm) in enumerate(PARADIGMS.items()):
        session_id = start(client, access_code=f"writer-{n}")
        sessions[paradigm] = session_id
        to_writing(client, session_id, prompt="shapeshifter")
        with writing(app.extensions["study.engine"]) as connection:
            session_store.update_session(connection, session_id, condition=condition, paradigm=paradigm)
        script = Script(paradigm=paradigm)
        script.type(" The door opened")
        first = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": script.text[:-1]}).json
        script.suggest(first["suggestionId"], first["suggestion"]["original"], "esc")
        script.type(" slowly.")
        doc = script.text[:-1]
        history = [{"kind": "reject", "index": len(doc) - len(" slowly."), "text": first["suggestion"]["original"]}]
        second = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "history": history}).json
        script.suggest(second["suggestionId"], second["suggestion"]["original"], "accept")
        script.type(" Rain fell.")
        events = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]
        assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
        finish = {"last_seq": len(events) - 1, "text": script.text}
        assert client.post(f"/s/{session_id}/writing/finish", json=finish).status_code == 200
    app.extensions["study.engine"].dispose()
    out = tmp_path / "extended"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, sessions


def test_suggestions_csv_carries_state_action_response_and_next_state(exported, tmp_path):
    folder, sessions = exported
    metrics = tmp_path / "metrics"
    result = CliRunner().invoke(main, ["curate", "proactive", str(folder), "--out", str(metrics)])
    assert result.exit_code == 0, result.output
    with (metrics / "suggestions.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    l1 = [r for r in rows if r["session_id"] == sessions["L1"]]
    l2 = [r for r in rows if r["session_id"] == sessions["L2"]]
    assert [r["outcome"] for r in l1] == [r["outcome"] for r in l2] == ["rejected", "accepted"]
    # s_t: L1 saw a local window of the text, without the history it was sent; L2 saw the
    # snapshot with the rejected suggestion marked up.
    assert l1[1]["strategy"] == "L1" and l1[1]["state"].endswith("The door opened slowly.")
    assert "<reject>" not in l1[1]["state"]
    rejected = l2[0]["suggestion"]
    assert l2[1]["strategy"] == "L2" and f"<reject>{rejected}</reject>" in l2[1]["state"]
    # a_t, u_t, s_t+1: the accepted suggestion, then the text the writer's response left.
    accepted = l2[1]["suggestion"]
    assert l2[1]["accepted_text"] == accepted
    assert l2[1]["next_state"].endswith(f" The door opened slowly.{accepted} Rain fell.")
    assert l2[0]["next_state"].endswith(" The door opened slowly.")  # when the next was asked for


def test_a_broken_requests_file_is_named_with_its_field(exported, tmp_path):
    folder, _ = exported
    path = folder / "suggestion_requests.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["requests"]) == 4 and read_requests(path)
    data["requests"][1]["context"] = 3
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RequestsFileError, match=r"suggestion_requests.json: requests\[1\].context: 3 is not of type 'string'"):
        read_requests(path)
    result = CliRunner().invoke(main, ["curate", "proactive", str(folder), "--out", str(tmp_path / "m")])
    assert result.exit_code == 1 and "requests[1].context" in result.output


def test_sessions_csv_names_the_paradigm_each_session_ran_with_after_study_toml_changed_it(exported, tmp_path):
    from tests.export.test_paradigm_changed_under_its_name import _set_paradigm

    _, sessions = exported
    folder = tmp_path / "study"
    _set_paradigm(folder, "creative-low", "L3")  # the L1 arm's name kept for L3 from now on
    again = tmp_path / "again"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(again)])
    assert result.exit_code == 0, result.output
    with (again / "sessions.csv").open(encoding="utf-8") as handle:
        ran = {row["session_id"]: (row["condition"], row["paradigm"]) for row in csv.DictReader(handle)}
    assert ran == {sessions["L1"]: ("creative-low", "L1"), sessions["L2"]: ("creative-high", "L2")}
