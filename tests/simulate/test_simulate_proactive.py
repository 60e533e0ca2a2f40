"""`study init --paradigm proactive` writes a MindCopilot study that is served at once, and
`study simulate` pilots it: its writers pause, see ghost text, and accept, partially accept,
modify or reject it, logged so that the event API takes it and the proactive export validates."""

from __future__ import annotations

import csv
import itertools
import json
import socket
import subprocess
import sys
import threading
import time

import httpx
from click.testing import CliRunner

from study import config
from study.cli import main
from study.lm.backends import Generation
from study.simulate.pages import read_page
from study.store import events as event_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.simulate.conftest import ScriptedWriterBackend, pilot

REACTIONS = ("accept", "partial", "modify", "reject")


class GhostTextWriterBackend(ScriptedWriterBackend):
    """The scripted writer, answering the ghost texts it sees with each reaction in turn."""

    def __init__(self) -> None:
        self.turns = itertools.cycle(REACTIONS)
        self.lock = threading.Lock()

    def generate(self, prompt: str, **decoding) -> list[Generation]:
        if "in grey after your text" not in prompt[prompt.rfind("User:"):]:
            return super().generate(prompt, **decoding)
        with self.lock:
            text = json.dumps({"react": next(self.turns)})
        return [Generation(text, [0.0] * len(text), "stop", list(text))]


def _init(tmp_path, choice: str):
    folder = tmp_path / choice
    result = CliRunner().invoke(main, ["init", str(folder), "--paradigm", choice])
    assert result.exit_code == 0, result.output
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace("min_seconds = 600", "min_seconds = 1"))
    return folder


def test_init_writes_one_condition_per_mindcopilot_paradigm_and_genre(tmp_path):
    study = config.load(_init(tmp_path, "proactive"))
    assert sorted(c.name for c in study.conditions) == [
        f"{genre}-{level}" for genre in ("argumentative", "creative") for level in ("L1", "L2", "L3")
    ]
    assert {c.n for c in study.conditions} == {1}  # one ghost text at a time
    assert {c.paradigm for c in config.load(_init(tmp_path, "L3")).conditions} == {"L3"}


def test_simulated_writers_answer_ghost_text_and_their_sessions_validate(tmp_path, suggestion_model):
    folder = _init(tmp_path, "proactive")
    result = pilot(folder, GhostTextWriterBackend(), writers=3, model="ghost", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output

    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        logs = [event_store.records(connection, s["session_id"]) for s in sessions]
    engine.dispose()
    assert all(s["stage"] == "complete" for s in sessions)
    assert {study.condition(s["condition"]).paradigm for s in sessions} <= {"L1", "L2", "L3"}
    records = [r for log in logs for r in log]
    assert all("proactive" in r for r in records)
    closes = {r["proactive"].get("closeReason") for r in records if r["eventName"] == "suggestion-close"}
    assert {"accept", "typed", "esc"} <= closes  # accepted, partially accepted, rejected
    assert any(r["proactive"].get("partial") for r in records if r["eventName"] == "text-insert")
    assert any(r["eventName"] == "suggestion-modify" for r in records)
    assert not any(r["eventName"] == "suggestion-fail" for r in records)

    out = tmp_path / "export"
    exported = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    validated = CliRunner().invoke(main, ["curate", "validate", str(out), "--format", "json"])
    found = json.loads(validated.output)
    assert found["summary"]["sessions"] == 3
    problems = [i["message"] for s in found["sessions"] for i in s["issues"] if i["severity"] == "error"]
    assert validated.exit_code == 0 and problems == [], problems
    assert CliRunner().invoke(main, ["curate", "validate", str(folder)]).exit_code == 0
    # MindCopilot's post-task questionnaire (App. F) was asked after every session, on its 1-7 scale.
    strict = tmp_path / "strict"
    assert CliRunner().invoke(main, ["export", str(folder), "--out", str(strict)]).exit_code == 0
    with (strict / "survey.csv").open(encoding="utf-8") as handle:
        answers = list(csv.DictReader(handle))
    questionnaire = [f"q{n}_" for n in range(1, 11)]
    assert len(answers) == 3
    for row in answers:
        given = [value for column, value in row.items() if column.startswith(tuple(questionnaire))]
        assert len(given) == 10 and all(1 <= int(value) <= 7 for value in given), row


def test_study_serve_serves_an_initialised_l2_study_at_once(tmp_path, suggestion_model):
    """Nothing but the consent contact (as for every study) and the model endpoint to fill in:
    the writer gets the ghost-text editor, and a pause gets a suggestion."""
    folder = _init(tmp_path, "L2")
    for path in (folder / "study.toml", folder / "consent.html"):
        text = path.read_text()
        for old, new in {**CONTACT, 'endpoint = ""': f'endpoint = "{suggestion_model}"'}.items():
            text = text.replace(old, new, 1)
        path.write_text(text)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "study", "serve", str(folder), "--port", str(port),
                               "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=True, timeout=30) as http:
            deadline = time.monotonic() + 60  # a loaded 2-core machine imports the server slowly
            while True:
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and server.poll() is None, "study serve did not come up"
                    time.sleep(0.2)
            consent = http.get("/task", params={"access_code": "pilot-1"})
            http.post(str(consent.url), data={"consent": "yes"})
            http.post(str(consent.url).replace("consent", "instructions"))
            writing = http.post(str(consent.url).replace("consent", "prompt"), data={"prompt": "shapeshifter"})
            boot = read_page(writing.text).boot()
            assert boot["proactive"]["stateful"] and not boot["proactive"]["staged"]  # L2's behaviour
            answer = http.post(boot["proactive"]["url"], json={"doc": "The door opened and", "history": []})
            assert answer.status_code == 200, answer.text
            assert answer.json()["suggestion"]["original"].strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def _exported_pilot(tmp_path, suggestion_model):
    """A MindCopilot study piloted by two ghost-text writers, and its `study export --format
    proactive` folder."""
    folder = _init(tmp_path, "proactive")
    result = pilot(folder, GhostTextWriterBackend(), writers=2, model="ghost", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output
    out = tmp_path / "export"
    exported = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    return out


def test_the_proactive_export_of_a_pilot_and_its_report_mark_the_sessions_simulated(tmp_path, suggestion_model):
    """`study export --format proactive` writes no metadata.csv: its sessions.csv was the only
    table of the folder, and it held a pilot's sessions as a study's, as did `study report` of it."""
    out = _exported_pilot(tmp_path, suggestion_model)
    with (out / "sessions.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and {row["simulated"] for row in rows} == {"true"}
    reported = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "report.html")])
    assert reported.exit_code == 0, reported.output
    assert "2 sessions (2 simulated)" in reported.output
    assert "2 of 2 sessions were written by simulated writers" in (tmp_path / "report.html").read_text()


def test_the_proactive_export_holds_the_questionnaire_answered_after_every_session(tmp_path, suggestion_model):
    """MindCopilot asks Q1-Q10 after every session (App. F): `study export --format proactive`
    wrote the logs and sessions.csv but no survey.csv or surveys.json, though `study export
    --help` says the export writes them; a researcher analysing the extended folder had no answers."""
    out = _exported_pilot(tmp_path, suggestion_model)
    with (out / "sessions.csv").open(encoding="utf-8") as handle:
        sessions = {row["session_id"]: row for row in csv.DictReader(handle)}
    with (out / "survey.csv").open(encoding="utf-8") as handle:
        answers = list(csv.DictReader(handle))
    # One row per exported session, joined to sessions.csv (and its `simulated`) by session id.
    assert sorted(row["session_id"] for row in answers) == sorted(sessions)
    for row in answers:
        given = [value for column, value in row.items() if column.startswith(tuple(f"q{n}_" for n in range(1, 11)))]
        assert len(given) == 10 and all(1 <= int(value) <= 7 for value in given), row
    typed = json.loads((out / "surveys.json").read_text(encoding="utf-8"))["responses"]
    assert {r["session_id"] for r in typed} == set(sessions)
    # ... and `study report` of the folder shows them, per paradigm, as it does for the study.
    reported = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "report.html")])
    assert reported.exit_code == 0, reported.output
    assert "q1_mental_demand" in (tmp_path / "report.html").read_text(encoding="utf-8")
