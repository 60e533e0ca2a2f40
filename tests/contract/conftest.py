"""Live `study serve` processes of a writing, a proactive (MindCopilot L2) and a chat study,
each with sessions walked over real HTTP to the stages the API's operations need."""

from __future__ import annotations

import re
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from study.cli import write_study_files
from study.store.db import metadata, sessions
from tests.chat.flow import ANSWER, CONFIRMED
from tests.conftest import CONTACT
from tests.scale.servers import ServerProcess, free_port
from tests.server.flow import INIT_EVENT


@dataclass
class LiveStudy:
    kind: str
    server: ServerProcess
    database: Path
    # stage -> a session id at that stage when the run began
    sessions: dict[str, str] = field(default_factory=dict)
    # The operations run against this study: all of them on the writing study; on the others,
    # those their paradigm adds (the rest answer them as the writing study does).
    paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # One statement for the whole snapshot: it runs twice per generated request.
        # server_activity is the servers' own counts for `study status`, written every few seconds
        # whatever was asked (study.server.activity), not what a request stored.
        counts = ", ".join(f'(SELECT count(*) FROM "{table.name}")' for table in metadata.sorted_tables
                           if table.name != "server_activity")
        stages = (f"(SELECT group_concat(pair, ',') FROM (SELECT session_id || ':' || stage AS pair "
                  f"FROM {sessions.name} ORDER BY session_id))")
        self.snapshot = f"SELECT {counts}, {stages}"
        self.connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, isolation_level=None)

    @property
    def url(self) -> str:
        return self.server.url

    def stored(self) -> tuple:
        """Every table's row count and every session's stage: what a refused request must not change."""
        return self.connection.execute(self.snapshot).fetchone()


def _enter(client: httpx.Client, code: str) -> str:
    response = client.get("/task", params={"access_code": code})
    assert response.status_code == 302, response.text
    return response.headers["location"].split("/")[2]


def _post(client: httpx.Client, url: str, **kwargs) -> httpx.Response:
    response = client.post(url, **kwargs)
    assert response.status_code in (200, 302), (url, response.status_code, response.text[-500:])
    return response


def _writing_sessions(client: httpx.Client, proactive: bool) -> dict[str, str]:
    fresh = _enter(client, "contract-fresh")
    writer = _enter(client, "contract-writer")
    _post(client, f"/s/{writer}/consent", data={"consent": "yes"})
    _post(client, f"/s/{writer}/instructions")
    _post(client, f"/s/{writer}/prompt", data={"prompt": "shapeshifter"})
    doc = "Prompt.\n"
    event = {**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc) - 1}
    if proactive:  # every event of a proactive session carries it (the server fills it in)
        event["proactive"] = {}
    _post(client, f"/api/sessions/{writer}/events", json={"events": [event]})
    return {"consent": fresh, "writing": writer}


def _chat_sessions(client: httpx.Client) -> dict[str, str]:
    fresh = _enter(client, "contract-fresh")
    chatter = _enter(client, "contract-chatter")
    _post(client, f"/s/{chatter}/consent", data={"consent": "yes"})
    _post(client, f"/s/{chatter}/instructions", data=CONFIRMED)
    page = client.get(f"/s/{chatter}/intent").text
    _post(client, f"/s/{chatter}/intent", data={"intent": re.search(r'name="intent" value="([^"]+)"', page).group(1)})
    _post(client, f"/s/{chatter}/prewriting", data={f"q{n}": ANSWER for n in range(1, 7)})
    for n in range(3):  # three exchanges: the periodic rating is owed
        _post(client, f"/api/sessions/{chatter}/chat/messages", json={"client_id": f"contract-{n:04d}", "content": "Help me."})
    return {"consent": fresh, "chat": chatter}


def _folder(tmp: Path, kind: str, model_url: str) -> Path:
    folder = tmp / kind
    replacements = {"min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{model_url}"', **CONTACT}
    if kind == "chat":
        write_study_files(folder, paradigm="chat", replacements=replacements)
    elif kind == "proactive":
        write_study_files(folder, replacements=replacements, paradigms=("L2",))
    else:
        write_study_files(folder, replacements=replacements)
    return folder


PATHS = {
    "writing": (),
    "proactive": ("/api/sessions/{session_id}/proactive", "/api/sessions/{session_id}/events",
                  "/api/sessions/{session_id}/state", "/s/{session_id}/writing"),
    "chat": ("/api/sessions/{session_id}/chat/", "/api/sessions/{session_id}/surveys/",
             "/s/{session_id}/chat", "/s/{session_id}/intent", "/s/{session_id}/prewriting"),
}  # fmt: skip


@pytest.fixture(scope="module", params=["writing", "proactive", "chat"])
def live_study(request, tmp_path_factory, model_url):
    kind = request.param
    folder = _folder(tmp_path_factory.mktemp("contract"), kind, model_url)
    port = free_port()
    server = ServerProcess(
        [sys.executable, "-m", "study", "serve", str(folder), "--port", str(port), "--workers", "1", "--threads", "4"],
        port, folder / "server.log",
    )  # fmt: skip
    server.start(timeout=60)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            made = _chat_sessions(client) if kind == "chat" else _writing_sessions(client, kind == "proactive")
        live = LiveStudy(kind, server, folder / "study.db", made, PATHS[kind])
        yield live
        live.connection.close()
    finally:
        server.stop()
