"""A study with real released CoAuthor sessions posted through the server's API, sessions that
stopped at each stage, suggestions from the local deterministic model, and survey answers."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from study import config
from study.cli import write_study_files
from tests.conftest import COAUTHOR
from tests.server.flow import start, to_writing

METADATA = {row["session_id"]: row for row in csv.DictReader(open(COAUTHOR / "metadata.csv"))}
FINISHED = sorted(s for s, row in METADATA.items() if row["genre"] == "creative")[:3]


def _condition_for(study, row):
    for condition in study.conditions_for(row["genre"]):
        if condition.controls()["currentTemperature"] == row["temperature"]:
            return condition.name
    raise AssertionError(row)


@pytest.fixture
def report_study(tmp_path: Path, model_url: str) -> Path:
    """The study folder: 2 sessions stopped at consent and instructions, 3 released sessions
    posted and finished (2 with the survey done), one suggestion request each."""
    from study.server import create_app
    from study.store import sessions as session_store
    from study.store import writing

    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    study = config.load(folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
    app = create_app(study)
    client = app.test_client()
    start(client, access_code="left-at-consent")
    left = start(client, access_code="left-at-instructions")
    assert client.post(f"/s/{left}/consent", data={"consent": "yes"}).status_code == 302
    for number, released in enumerate(FINISHED):
        row = METADATA[released]
        ours = start(client, access_code=f"writer-{number}")
        to_writing(client, ours, prompt=row["prompt_code"])
        with writing(app.extensions["study.engine"]) as connection:
            session_store.update_session(connection, ours, condition=_condition_for(study, row))
        lines = (COAUTHOR / "sessions" / f"{released}.jsonl").read_text().splitlines()
        events = []
        for seq, line in enumerate(lines):
            record = json.loads(line)
            del record["eventNum"]
            events.append({"seq": seq, **record})
        for i in range(0, len(events), 200):
            assert client.post(f"/api/sessions/{ours}/events", json={"events": events[i : i + 200]}).status_code == 200
        response = client.post(f"/api/sessions/{ours}/suggestions", json={"doc": "Once upon a time"})
        assert response.status_code == 200, response.json
        response = client.post(f"/s/{ours}/writing/finish", json={"last_seq": len(events) - 1, "text": "x"})
        assert response.status_code == 200, response.json
        if number < 2:
            both = {"clear_ending": "yes", "collaborated": "yes"}
            assert client.post(f"/s/{ours}/evaluation", data=both).status_code == 302
            answers = {"native_speaker": "Yes", "ownership": str(5 + number), "satisfaction": "4", "reuse": "7"}
            assert client.post(f"/s/{ours}/survey", data=answers).status_code == 302
    app.extensions["study.engine"].dispose()
    return folder


class Tables(HTMLParser):
    """The report's tables as lists of rows of cell texts, keyed by the section they are in."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.sections: dict[str, list[list[list[str]]]] = {}
        self.texts: dict[str, str] = {}
        self._section = None
        self._cell = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._section = dict(attrs)["id"]
            self.sections[self._section] = []
            self.texts[self._section] = ""
        elif tag == "table" and self._section:
            self.sections[self._section].append([])
        elif tag == "tr" and self._section:
            self.sections[self._section][-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.sections[self._section][-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._section:
            self.texts[self._section] += data

    def rows(self, section: str, table: int = 0) -> dict[str, list[str]]:
        """First cell -> the other cells, for one table of a section."""
        return {row[0]: row[1:] for row in self.sections[section][table]}


def number(text: str) -> float:
    return float(re.match(r"-?[\d.]+", text).group())


# -- LanguageTool -------------------------------------------------------------------------------
# LanguageTool is a Java program that no installable package ships, so it cannot run here. This
# stand-in speaks its HTTP API (POST /v2/check, GET /v2/languages; offsets in UTF-16 code units,
# as Java counts them) so that the report's real client code runs unchanged. Its only "rule":
# every word "the" is an error.

def flagged(sentence: str) -> int:
    return len(re.findall(r"\bthe\b", sentence, flags=re.I))


@pytest.fixture(scope="module")
def languagetool():
    import threading

    from flask import Flask, jsonify, request
    from werkzeug.serving import make_server

    app = Flask("languagetool-stand-in")
    checked: list[str] = []

    @app.get("/v2/languages")
    def languages():
        return jsonify([{"name": "English (US)", "code": "en", "longCode": "en-US"}])

    @app.post("/v2/check")
    def check():
        text, language = request.form["text"], request.form["language"]
        assert language == "en-US"
        checked.append(text)
        matches = [
            {"message": "stand-in rule", "offset": len(text[: m.start()].encode("utf-16-le")) // 2,
             "length": 3, "rule": {"id": "THE", "issueType": "grammar"}}
            for m in re.finditer(r"\bthe\b", text, flags=re.I)
        ]  # fmt: skip
        return jsonify(matches=matches)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.checked = checked
    yield server
    server.shutdown()
    thread.join()
