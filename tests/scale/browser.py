"""A simulated browser over plain HTTP: the participant pages up to the editor, then the editor's
outbox (study/static/editor-outbox.js), which keeps every event until the server acknowledges it
and resends whatever is unacknowledged after an error."""

from __future__ import annotations

import re
import threading
import time

import httpx

MAX_BATCH = 50  # editor-outbox.js: at most this many events per request
CONTROLS = {
    "currentN": "5", "currentMaxToken": "30", "currentTemperature": "0.3",
    "currentTopP": "1", "currentPresencePenalty": "0", "currentFrequencyPenalty": "0",
}


def start_writing(client: httpx.Client, access_code: str) -> str:
    """Entry, consent, instructions and the first prompt; returns the session id."""
    location = client.get(f"/task?access_code={access_code}").headers["location"]
    session_id = re.search(r"/s/([0-9a-f]{32})/consent", location).group(1)
    location = client.post(location, data={"consent": "yes"}).headers["location"]
    location = client.post(location).headers["location"]
    page = client.get(location).text
    prompt = re.search(r'name="prompt" value="([^"]+)"', page).group(1)
    location = client.post(location, data={"prompt": prompt}).headers["location"]
    assert location.endswith(f"/s/{session_id}/writing"), location
    return session_id


class Browser:
    """Types characters and posts them as the editor does, one request at a time."""

    def __init__(self, client: httpx.Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.doc = "\n"
        self.seq = 0
        self.pending: list[dict] = []  # not yet acknowledged, in seq order
        self.acked: set[int] = set()
        self.failures = 0
        self.lock = threading.Lock()  # acked and failures are read from other threads
        self._add("system-initialize", "", doc=self.doc)

    def _add(self, name: str, delta, doc: str = "") -> None:
        self.pending.append({
            "seq": self.seq, "eventName": name,
            "eventSource": "api" if name == "system-initialize" else "user",
            "eventTimestamp": int(time.time() * 1000), "textDelta": delta, "cursorRange": "",
            "currentDoc": doc, "currentCursor": len(self.doc) - 1, "currentSuggestions": [],
            "currentSuggestionIndex": 0, "currentHoverIndex": "", **CONTROLS,
        })
        self.seq += 1

    def type(self, text: str) -> None:
        for character in text:
            cursor = len(self.doc) - 1  # typing at the end, before Quill's final newline
            ops = ([{"retain": cursor}] if cursor else []) + [{"insert": character}]
            self.doc = self.doc[:cursor] + character + self.doc[cursor:]
            self._add("text-insert", {"ops": ops})

    def send(self) -> bool:
        """Post one batch of pending events; False if the server could not be reached."""
        batch = self.pending[:MAX_BATCH]
        if not batch:
            return True
        try:
            response = self.client.post(
                f"/api/sessions/{self.session_id}/events", json={"events": batch}, timeout=10
            )
        except httpx.TransportError:
            with self.lock:
                self.failures += 1
            return False
        if response.status_code >= 500:
            with self.lock:
                self.failures += 1
            return False
        assert response.status_code == 200, f"{response.status_code}: {response.text}"
        acked = set(response.json()["acked"])
        assert acked == {record["seq"] for record in batch}
        with self.lock:
            self.acked |= acked
        self.pending = [record for record in self.pending if record["seq"] not in acked]
        return True

    def typed(self, text: str) -> None:
        """Type `text` and post until the server has acknowledged every event."""
        self.type(text)
        while self.pending:
            assert self.send(), "the server did not acknowledge the events"

    def progress(self) -> tuple[set[int], int]:
        """(acknowledged seqs, failed requests) so far."""
        with self.lock:
            return set(self.acked), self.failures
