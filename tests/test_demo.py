"""`study demo`: a ready study with a local model, from nothing, over real HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_up(http: httpx.Client, server: subprocess.Popen, seconds: float = 60) -> None:
    """Until the demo answers /healthz: a demo starting beside a busy test suite can take more
    than the 10 s a quiet machine needs (it writes the study and starts a server)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"study demo exited ({server.returncode}):\n{server.stdout.read()}")
        try:
            if http.get("/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"study demo did not answer /healthz within {seconds:.0f} s")


@dataclass
class _Demo:
    http: httpx.Client
    output: str = ""  # what the demo printed, once it has stopped


@contextmanager
def _demo(folder, *flags: str) -> Iterator[_Demo]:
    """`study demo --dir FOLDER FLAGS` on the deterministic backend and a free port, answering
    while the block runs, and stopped after it."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "study", "demo", "--dir", str(folder), "--port", str(port),
         "--backend", "deterministic", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    demo = None
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=True, timeout=10) as http:
            _wait_until_up(http, server)
            demo = _Demo(http)
            yield demo
    finally:
        server.terminate()
        output = server.communicate(timeout=10)[0]
        if demo is not None:
            demo.output = output


def _to_the_editor(http: httpx.Client) -> str:
    """A demo writer's way to the editor (access code, consent, instructions, a prompt); the
    session id."""
    consent_url = str(http.get("/task", params={"access_code": "demo"}).url)
    http.post(consent_url, data={"consent": "yes"})
    http.post(consent_url.replace("consent", "instructions"))
    writing = http.post(consent_url.replace("consent", "prompt"), data={"prompt": "obama"})
    assert 'data-testid="editor"' in writing.text
    return consent_url.split("/")[4]


def test_demo_serves_the_whole_path_with_suggestions(tmp_path):
    folder = tmp_path / "demo"
    with _demo(folder, "--min-seconds", "0") as demo:
        http = demo.http
        page = http.get("/task", params={"access_code": "demo"})
        assert 'data-testid="consent"' in page.text
        consent_url = str(page.url)
        http.post(consent_url, data={"consent": "yes"})
        http.post(consent_url.replace("consent", "instructions"))
        writing = http.post(consent_url.replace("consent", "prompt"), data={"prompt": "obama"})
        assert 'data-testid="editor"' in writing.text
        session_id = consent_url.split("/")[4]
        answer = http.post(
            f"/api/sessions/{session_id}/suggestions",
            json={"doc": "You're Barack Obama. It was a quiet morning"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["suggestions"]
        assert (folder / "study.toml").is_file() and (folder / "study.db").is_file()
        assert "min_seconds = 0" in (folder / "study.toml").read_text()
    assert "access_code=demo" in demo.output


def test_chat_demo_answers_offline_with_the_local_model(tmp_path):
    folder = tmp_path / "chat-demo"
    with _demo(folder, "--paradigm", "chat") as demo:
        http = demo.http
        consent_url = str(http.get("/task", params={"access_code": "demo"}).url)
        http.post(consent_url, data={"consent": "yes"})
        intent = http.post(consent_url.replace("consent", "instructions"), data={"confirm1": "yes", "confirm2": "yes"})
        key = intent.text.split('name="intent" value="')[1].split('"')[0]
        http.post(str(intent.url), data={"intent": key})
        note = "I want a warm and honest tone with short paragraphs and one vivid example."
        chat = http.post(consent_url.replace("consent", "prewriting"), data={f"q{n}": note for n in range(1, 7)})
        assert 'data-testid="chat-input"' in chat.text
        session_id = consent_url.split("/")[4]
        answer = http.post(f"/api/sessions/{session_id}/chat/messages",
                           json={"client_id": "demo-client-1", "content": "Help me start, please."})
        assert answer.status_code == 200, answer.text
        assert answer.json()["assistant"]["content"] and answer.json()["exchanges"] == 1
        assert "[chat]" in (folder / "study.toml").read_text()


def test_proactive_demo_folder_is_a_proactive_study_for_every_later_command(tmp_path):
    """The demo's sessions are in L1-L3 conditions; status, export and report run on the folder
    afterwards must know them (they read study.toml, not the demo's memory)."""
    folder = tmp_path / "proactive-demo"
    with _demo(folder, "--paradigm", "proactive", "--min-seconds", "0") as demo:
        _to_the_editor(demo.http)

    def study(*args):
        return subprocess.run([sys.executable, "-m", "study", *args], capture_output=True, text=True)

    status = study("status", str(folder))
    assert status.returncode == 0, status.stderr
    assert "creative-L1 1" in status.stdout
    exported = study("export", str(folder), "--format", "proactive", "--all", "--out", str(tmp_path / "out"))
    assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr


def test_proactive_demo_refuses_a_folder_without_proactive_conditions(tmp_path):
    folder = tmp_path / "writing-study"
    subprocess.run([sys.executable, "-m", "study", "init", str(folder)], check=True, capture_output=True)
    result = subprocess.run(
        [sys.executable, "-m", "study", "demo", "--paradigm", "L2", "--dir", str(folder),
         "--port", str(_free_port()), "--backend", "deterministic"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert "without L2 conditions" in result.stderr and "--dir" in result.stderr


def test_a_demo_of_an_existing_study_folder_keeps_the_minimum_time_asked_for(tmp_path):
    """`study init DIR` then `study demo --dir DIR --min-seconds 0` (init's own advice): the
    folder is reused, and the writer may finish at once, as the flag says, not after the
    study's ten minutes."""
    from tests.server.flow import INIT_EVENT

    folder = tmp_path / "mystudy"
    subprocess.run([sys.executable, "-m", "study", "init", str(folder)], check=True, capture_output=True)
    with _demo(folder, "--min-seconds", "0") as demo:
        http = demo.http
        session_id = _to_the_editor(http)
        event = {**INIT_EVENT, "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}
        stored = http.post(f"/api/sessions/{session_id}/events", json={"events": [event]})
        assert stored.status_code == 200, stored.text
        finished = http.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
        assert finished.status_code == 200, finished.text


def test_a_demo_of_a_study_folder_of_ones_own_keeps_its_sessions_out_of_the_studys_database(tmp_path):
    """`study init DIR` advises `study demo --dir DIR`: the demo's sessions went into
    DIR/study.db, where the balanced rule counted them, `study export` exported them as
    participants' and `study status` said a preregistration record could no longer be made."""
    folder = tmp_path / "mystudy"
    subprocess.run([sys.executable, "-m", "study", "init", str(folder)], check=True, capture_output=True)
    with _demo(folder, "--min-seconds", "0") as demo:
        consent = demo.http.get("/task", params={"access_code": "demo"})
        assert "[REPLACE" not in consent.text and "local demonstration" in consent.text
        _to_the_editor(demo.http)
    assert f"The demo stores its sessions in {folder / 'demo.db'}" in " ".join(demo.output.split())
    assert (folder / "demo.db").exists()

    status = subprocess.run([sys.executable, "-m", "study", "status", str(folder)], capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    assert "has not been served yet" in status.stdout
    assert "a record can no longer be made" not in status.stdout


def test_the_demos_editor_waits_for_a_cpu_model_a_minute_not_the_studys_fifteen_seconds(tmp_path):
    """Five 120-token suggestions (`study demo --design dhillon`'s next-paragraph arm) took 45 s
    from SmolLM2 on a busy 2-core machine: past study.toml's 15 s every Tab of the arm failed."""
    import json
    import re

    with _demo(tmp_path / "demo", "--min-seconds", "0") as demo:
        session_id = _to_the_editor(demo.http)
        page = demo.http.get(f"/s/{session_id}/writing").text
    boot = json.loads(re.search(r'<script id="boot" type="application/json">(.*?)</script>', page, re.S)[1])
    assert boot["suggestionsWaitMs"] >= 60_000


def test_a_demos_folder_is_not_served_to_participants_with_the_demos_consent_page(tmp_path, monkeypatch):
    """The demo's consent page tells the writer there is no protocol director and that nothing
    written leaves the computer: `study serve` of the folder put that before real participants."""
    from click.testing import CliRunner

    from study.cli import main
    from study.server import serving

    folder = tmp_path / "demo"
    with _demo(folder):
        pass
    started = []
    monkeypatch.setattr(serving, "run", lambda app, **options: started.append(app))
    served = CliRunner().invoke(main, ["serve", str(folder), "--port", str(_free_port())])
    assert served.exit_code == 1 and started == [], served.output
    said = " ".join(served.output.split())
    assert "not serving participants yet: the consent page (consent.html) is the demo's" in said
    assert "Fix: replace that with the protocol director's name and how to reach them" in said
