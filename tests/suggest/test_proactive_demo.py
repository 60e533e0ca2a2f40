"""`study demo --paradigm proactive`: L1-L3 with a local model, offline, over real HTTP."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from study import config
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.test_demo import _free_port


def _to_writing(http, prompt: str) -> tuple[str, str]:
    page = http.get("/task", params={"access_code": f"demo-{prompt}"})
    consent_url = str(page.url)
    http.post(consent_url, data={"consent": "yes"})
    http.post(consent_url.replace("consent", "instructions"))
    writing = http.post(consent_url.replace("consent", "prompt"), data={"prompt": prompt})
    return consent_url.split("/")[4], writing.text


def test_the_proactive_demo_rotates_writers_through_l1_l2_l3_offline(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "study", "demo", "--dir", str(tmp_path / "demo"), "--port", str(port),
         "--backend", "deterministic", "--min-seconds", "0", "--paradigm", "proactive"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=True, timeout=10) as http:
            for _ in range(150):
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            sessions = []
            for prompt in ("obama", "mana", "pig"):
                session_id, page = _to_writing(http, prompt)
                assert "editor-proactive.js" in page
                assert '"paradigm"' not in page  # the writer is not told their condition
                sessions.append(session_id)
                answer = http.post(f"/api/sessions/{session_id}/proactive", json={"doc": "It was a quiet morning"})
                assert answer.status_code == 200, answer.text
                assert answer.json()["suggestion"]["original"].strip()
    finally:
        server.terminate()
        output = server.communicate(timeout=10)[0]
    demo = config.load(tmp_path / "demo")
    engine = make_engine(demo.database_url)
    with reading(engine) as connection:
        paradigms = [demo.condition(session_store.get(connection, s)["condition"]).paradigm for s in sessions]
    engine.dispose()
    assert sorted(paradigms) == ["L1", "L2", "L3"]
    assert "Paradigms: L1, L2, L3" in output
