"""`study curate validate STUDY_FOLDER` checks each stored session against the database: what
the event API refuses on arrival (issue 21, item 7) is found also in rows that reached the
database some other way (stored before the rule, or written by hand)."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import orjson
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import writing
from study.store.db import events
from tests.curation.proactive_session import Script
from tests.server.flow import start, to_writing


def _study_with_one_session(tmp_path, model_url):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={'mode = "completion"\n': 'mode = "chat"\n'}, paradigms=("L1", "L2"))
    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id, prompt="shapeshifter")
    paradigm = study.condition(_condition(app, session_id)).paradigm
    answer = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "The door opened", "idle_ms": 2000}).json
    script = Script(paradigm=paradigm).type(" The door opened").suggest(answer["suggestionId"], answer["suggestion"]["original"])
    batch = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": batch}).status_code == 200
    return folder, app, session_id, paradigm, len(batch)


def _condition(app, session_id):
    from study.store import reading
    from study.store import sessions as session_store

    with reading(app.extensions["study.engine"]) as connection:
        return session_store.get(connection, session_id)["condition"]


def _validate(folder, *options):
    result = CliRunner().invoke(main, ["curate", "validate", str(folder), "--format", "json", *options])
    return result.exit_code, json.loads(result.output)


def test_a_study_folder_with_honest_sessions_validates(tmp_path, model_url):
    folder, app, session_id, _, count = _study_with_one_session(tmp_path, model_url)
    app.extensions["study.engine"].dispose()
    status, found = _validate(folder)
    assert status == 0, found
    (report,) = found["sessions"]
    assert report["session_id"] == session_id and report["events"] == count and report["errors"] == 0


def test_rows_that_bypassed_the_event_api_are_named(tmp_path, model_url):
    folder, app, session_id, paradigm, count = _study_with_one_session(tmp_path, model_url)
    other = "L2" if paradigm == "L1" else "L1"
    forged = Script(paradigm=other)
    forged.suggest(777, " Text the model never sent.", "accept")
    rows = []
    for offset, event in enumerate(forged.events[1:]):
        record = {k: v for k, v in event.items() if k != "eventNum"}
        rows.append({"session_id": session_id, "seq": count + offset, "event_name": record["eventName"],
                     "event_timestamp": record["eventTimestamp"], "record": orjson.dumps(record).decode(),
                     "received_at": time.time()})  # fmt: skip
    with writing(app.extensions["study.engine"]) as connection:
        connection.execute(events.insert(), rows)
    app.extensions["study.engine"].dispose()
    status, found = _validate(folder, "--verbose")
    assert status == 1
    forged_issues = [i for i in found["sessions"][0]["issues"] if i["code"] == "proactive-forged"]
    assert forged_issues[0]["line"] == count + 1 and forged_issues[0]["field"] == "proactive.paradigm"
    assert f"this session's condition is {paradigm}" in forged_issues[0]["message"]
    assert len(forged_issues) == len(rows)
