"""Several hosts (README, "Several hosts"): two task servers, each `gunicorn study.server.wsgi:app`
on its own port as it would run on its own host, on one PostgreSQL database. The test plays the
reverse proxy in front of them: it sends each request of one writer to the other host than the
last, with the X-Forwarded-For and -Proto headers nginx sets. The writer's whole path works,
and `study export` has every event and passes `study curate validate`."""

from __future__ import annotations

import json
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from study import config
from study.cli import main as study_cli
from study.curation.replay import replay
from study.simulate.editor import EditorLog, clean_suggestions
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.db import start_throttle, suggestion_requests

from .servers import ServerProcess, free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(shutil.which("gunicorn") is None, reason="gunicorn is not installed"),
]

# What a proxy adds to each request: the writer's own address and the https it received.
FORWARDED = {"X-Forwarded-For": "198.51.100.23", "X-Forwarded-Proto": "https"}
SURVEY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}


def host(folder: Path, tmp_path: Path, name: str) -> ServerProcess:
    """One host of the recipe: gunicorn on the study's WSGI app, trusting one proxy."""
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "-c", "python:study.server.gunicorn_config", "--workers", "2", "--threads", "4",
        "--bind", f"127.0.0.1:{port}", "--forwarded-allow-ips", "127.0.0.1", "study.server.wsgi:app",
    ]  # fmt: skip
    env = {"STUDY_DIR": str(folder), "STUDY_SECRET_KEY": "one-key-for-every-host", "STUDY_TRUSTED_PROXIES": "1"}
    return ServerProcess(command, port, tmp_path / f"host-{name}.log", env=env)


class RoundRobin:
    """The reverse proxy: each request goes to the next host in turn."""

    def __init__(self, hosts: list[ServerProcess]) -> None:
        self.clients = [httpx.Client(base_url=h.url, headers=FORWARDED, timeout=30) for h in hosts]
        self.sent = [0] * len(hosts)

    def request(self, method: str, url: str, **options) -> httpx.Response:
        turn = sum(self.sent) % len(self.clients)
        self.sent[turn] += 1
        return self.clients[turn].request(method, url, **options)

    def get(self, url: str, **options) -> httpx.Response:
        return self.request("GET", url, **options)

    def post(self, url: str, **options) -> httpx.Response:
        return self.request("POST", url, **options)

    def close(self) -> None:
        for client in self.clients:
            client.close()


@pytest.fixture
def two_hosts(study_folder, tmp_path, new_postgres_database, model_url):
    toml = study_folder / "study.toml"
    text = toml.read_text().replace('database = ""', f'database = "{new_postgres_database}"', 1)
    toml.write_text(text.replace('endpoint = ""', f'endpoint = "{model_url}"', 1))
    # Each host has its own copy of the study folder, as separate machines would.
    hosts = []
    for name in ("a", "b"):
        copy = tmp_path / f"host-{name}" / "study"
        shutil.copytree(study_folder, copy)
        hosts.append(host(copy, tmp_path, name))
    try:
        # Both at the same moment on a database without tables, as hosts started together are.
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda h: h.start(timeout=90), hosts))
        yield hosts
    finally:
        for each in hosts:
            each.stop()


def to_writing(proxy: RoundRobin, access_code: str) -> tuple[str, str]:
    """Entry to the writing page, each page loaded before it is posted; (session id, prompt code)."""
    location = proxy.get(f"/task?access_code={access_code}").headers["location"]
    session_id = re.search(r"/s/([0-9a-f]{32})/consent", location).group(1)
    assert proxy.get(location).status_code == 200
    location = proxy.post(location, data={"consent": "yes"}).headers["location"]
    assert proxy.get(location).status_code == 200
    location = proxy.post(location).headers["location"]
    code = re.search(r'name="prompt" value="([^"]+)"', proxy.get(location).text).group(1)
    location = proxy.post(location, data={"prompt": code}).headers["location"]
    assert location == f"/s/{session_id}/writing"
    assert proxy.get(location).status_code == 200
    return session_id, code


def send(proxy: RoundRobin, session_id: str, log: EditorLog) -> int:
    batch = log.take_unsent()
    response = proxy.post(f"/api/sessions/{session_id}/events", json={"events": batch})
    assert response.status_code == 200, response.text
    assert response.json()["acked"] == [record["seq"] for record in batch]
    return len(batch)


def test_one_writer_served_by_two_hosts_on_one_postgresql_exports_every_event(study_folder, tmp_path, two_hosts):
    study = config.load(study_folder)
    engine = make_engine(study.database_url)
    proxy = RoundRobin(two_hosts)
    try:
        session_id, code = to_writing(proxy, "lab-writer-1")
        with reading(engine) as connection:
            session = session_store.get(connection, session_id)
        log = EditorLog(study.prompt(code).text, study.condition(session["condition"]).controls())
        sent = 0
        for word in (" The", " door", " opened"):
            for character in word:
                log.type(character)
            sent += send(proxy, session_id, log)
            log.ask()
            answer = proxy.post(f"/api/sessions/{session_id}/suggestions", json={"doc": log.document})
            assert answer.status_code == 200, answer.text
            items = clean_suggestions(answer.json()["suggestions"])
            assert items, "the local model suggested nothing"
            log.shown(items)
            log.accept(items[0])
            sent += send(proxy, session_id, log)
        state = proxy.get(f"/api/sessions/{session_id}/state").json()
        assert state["doc"] == log.document and state["stored"] == sent

        finish = proxy.post(f"/s/{session_id}/writing/finish", json={"last_seq": log.last_seq, "text": log.document})
        assert finish.status_code == 200, finish.text
        location = finish.json()["next"]
        assert proxy.get(location).status_code == 200
        location = proxy.post(location, data={"clear_ending": "yes", "collaborated": "yes"}).headers["location"]
        while not location.endswith("/complete"):  # the survey, page by page
            assert proxy.get(location).status_code == 200
            response = proxy.post(location, data=SURVEY)
            assert response.status_code == 302, response.text
            location = response.headers["location"]
        complete = proxy.get(location)
        assert complete.status_code == 200
    finally:
        proxy.close()
    assert min(proxy.sent) >= 10  # both hosts served the writer, in turns

    with reading(engine) as connection:
        stored = session_store.get(connection, session_id)
        asked = connection.execute(select(suggestion_requests.c.error)).scalars().all()
        # The start was counted for the writer's address (the proxy's own, loopback, never is):
        # each host took the client address from X-Forwarded-For.
        starts = connection.execute(select(func.count()).select_from(start_throttle)).scalar_one()
    engine.dispose()
    assert stored["stage"] == "complete" and stored["verification_code"] in complete.text
    assert stored["missing_events"] == 0
    assert asked == [None, None, None]  # three model calls, each answered
    assert starts == 1

    out = tmp_path / "export"
    exported = CliRunner().invoke(study_cli, ["export", str(study_folder), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    lines = (out / f"{session_id}.jsonl").read_text().splitlines()
    assert len(lines) == sent == log.last_seq + 1
    assert [json.loads(line)["eventName"] for line in lines].count("suggestion-open") == 3
    assert replay([json.loads(line) for line in lines]).text == log.document
    survey = (out / "survey.csv").read_text()
    assert session_id in survey

    for checked in (out, study_folder):  # the files, and the database against what it issued
        result = CliRunner().invoke(study_cli, ["curate", "validate", str(checked), "--format", "json"])
        report = json.loads(result.output)
        errors = [i["message"] for s in report["sessions"] for i in s["issues"] if i["severity"] == "error"]
        assert result.exit_code == 0 and errors == [], errors
        assert report["summary"]["sessions"] == 1
