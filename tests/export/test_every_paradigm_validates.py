"""Every export of every MindCopilot paradigm passes `study curate validate` (issue 21, item 3):
L0's list of five suggestions in the extended format, and suggestions whose probability is
unknown (a chat endpoint gives no log-probabilities) in the strict CoAuthor format. Sessions
are written through the real server's APIs with the local model answering over HTTP."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.simulate.editor import EditorLog, clean_suggestions
from study.store import sessions as session_store
from study.store import writing
from tests.curation.proactive_session import Script
from tests.server.flow import start, to_writing

PARADIGMS = ("L0", "L1", "L2", "L3")


@pytest.fixture
def chat_endpoint():
    """The local endpoint answering as most hosted chat endpoints do: no log-probabilities."""
    from study.lm.backends import DeterministicBackend
    from study.lm.server import serve_in_thread

    base_url, stop = serve_in_thread(DeterministicBackend(), logprobs=False)
    yield base_url
    stop()


def _l0_events(client, session_id, prompt, condition):
    log = EditorLog(prompt, condition.controls())
    for character in " The door":
        log.type(character)
    log.ask()
    answer = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": log.document}).json
    items = clean_suggestions(answer["suggestions"])
    log.shown(items)
    log.accept(items[0])
    return [{**event, "proactive": {"paradigm": "L0"}} for event in log.take_unsent()], items


def _proactive_events(client, session_id, paradigm, prompt):
    script = Script(prompt=prompt, paradigm=paradigm).type(" The door")
    for outcome in ("accept", "partial", "esc"):
        doc = script.text[:-1]
        answer = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "idle_ms": 2000}).json
        script.suggest(answer["suggestionId"], answer["suggestion"]["original"], outcome, stage=answer["stage"])
        script.type(" and")
    return [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]


def test_strict_and_extended_exports_of_all_four_paradigms_validate(tmp_path, chat_endpoint):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0",
                                            'mode = "completion"\n': 'mode = "chat"\n'},
                      paradigms=PARADIGMS)  # fmt: skip
    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=chat_endpoint)))
    client = app.test_client()
    prompt = study.prompt("shapeshifter")
    shown = None
    for number, paradigm in enumerate(PARADIGMS):
        condition = next(c for c in study.conditions if c.genre == prompt.genre and c.paradigm == paradigm)
        session_id = start(client, access_code=f"writer-{number}")
        to_writing(client, session_id, prompt="shapeshifter")
        with writing(app.extensions["study.engine"]) as connection:
            session_store.update_session(connection, session_id, condition=condition.name)
        text = prompt.text.rstrip("\n") + "\n"
        if paradigm == "L0":
            events, shown = _l0_events(client, session_id, text, condition)
        else:
            events = _proactive_events(client, session_id, paradigm, text)
        response = client.post(f"/api/sessions/{session_id}/events", json={"events": events})
        assert response.status_code == 200, response.json
        finish = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": len(events) - 1})
        assert finish.status_code == 200, finish.json
    app.extensions["study.engine"].dispose()
    assert len(shown) == 5 and {item["probability"] for item in shown} == {None}  # what L0 showed

    for export_format in ("coauthor", "proactive"):
        out = tmp_path / export_format
        result = CliRunner().invoke(main, ["export", str(folder), "--format", export_format, "--out", str(out)])
        assert result.exit_code == 0, result.output
        result = CliRunner().invoke(main, ["curate", "validate", str(out), "--format", "json"])
        found = json.loads(result.output)
        assert found["summary"]["sessions"] == 4
        problems = [i["message"] for s in found["sessions"] for i in s["issues"] if i["severity"] == "error"]
        assert result.exit_code == 0 and problems == [], problems
    strict = [json.loads(line) for path in sorted((tmp_path / "coauthor").glob("*.jsonl"))
              for line in path.read_text().splitlines()]  # fmt: skip
    opened = [r for r in strict if r["eventName"] == "suggestion-open"]
    assert max(len(r["currentSuggestions"]) for r in opened) == 5
    assert all(item["probability"] is None for r in opened for item in r["currentSuggestions"])

    result = CliRunner().invoke(main, ["curate", "validate", str(folder)])
    assert result.exit_code == 0, result.output
