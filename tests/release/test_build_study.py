"""A release built straight from a study folder: its database, its survey, its study.toml."""

from __future__ import annotations

import csv
import json
import time

from click.testing import CliRunner

from study.release.cli import release
from study.release.keys import init_keyfile
from study.release.pseudonyms import ReidentificationTable, is_pseudonym
from study.store import writing
from study.store.db import suggestion_requests
from study.store.mturk import mturk_assignments
from tests.conftest import COAUTHOR
from tests.release.conftest import EMAIL, PHONE, SMALLEST, released
from tests.release.inject import Writer
from tests.server.flow import to_writing

WORKER = "A2STUDYWORKER77"


def take_part(client, session_id: str, events: list[dict], while_writing=None) -> None:
    """The writer's events, then `while_writing()` (e.g. asking for suggestions), the finish,
    the self-evaluation and the survey."""
    batch = [
        {"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}}
        for seq, e in enumerate(events)
    ]
    for start in range(0, len(batch), 200):
        response = client.post(
            f"/api/sessions/{session_id}/events", json={"events": batch[start : start + 200]}
        )
        assert response.status_code == 200, response.json
    if while_writing is not None:
        while_writing()
    response = client.post(
        f"/s/{session_id}/writing/finish", json={"last_seq": len(batch) - 1, "text": "final"}
    )
    assert response.status_code == 200, response.json
    checks = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=checks).status_code == 302
    comments = f"Loved it! Write me at {EMAIL} or call {PHONE}. My id is {WORKER}."
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7",
               "comments": comments}  # fmt: skip
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302


def synced(app, assignment_id: str, worker_id: str) -> None:
    """The assignment as `study mturk sync` records it: MTurk confirms a real worker did it."""
    with writing(app.extensions["study.engine"]) as connection:
        connection.execute(mturk_assignments.insert().values(
            environment="sandbox", assignment_id=assignment_id, hit_id="3HIT1",
            worker_id=worker_id, status="Submitted", synced_at=time.time(),
        ))  # fmt: skip


def answered(app, condition: str, model: str) -> None:
    """A suggestion request the endpoint answered, naming the model that answered."""
    with writing(app.extensions["study.engine"]) as connection:
        connection.execute(suggestion_requests.insert().values(
            session_id="0" * 32, created_at=time.time(), condition=condition, model=model,
            parameters="{}", raw="[]", suggestions="[]", latency_ms=1.0,
        ))  # fmt: skip


def test_a_study_folder_releases_its_sessions_survey_and_description(
    client, app, study_folder, tmp_path
):
    events = [
        json.loads(line)
        for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()
    ]
    writer = Writer(events)
    writer.type(f" Mail {EMAIL} or ask for {WORKER}.")
    response = client.get(
        "/task",
        query_string={
            "workerId": WORKER,
            "assignmentId": "3ASSIGN1",
            "hitId": "3HIT1",
            "turkSubmitTo": "https://workersandbox.mturk.com",
        },
    )
    session_id = response.location.split("/")[2]
    to_writing(client, session_id, prompt="audiobook")
    take_part(client, session_id, writer.events)
    synced(app, "3ASSIGN1", WORKER)
    # A session opened with a made-up assignment, which MTurk never confirmed: not released.
    made_up = client.get("/task", query_string={
        "workerId": "A2MADEUPWORKER", "assignmentId": "3MADEUP", "hitId": "3HIT1",
        "turkSubmitTo": "https://workersandbox.mturk.com",
    }).location.split("/")[2]  # fmt: skip
    to_writing(client, made_up, prompt="audiobook")
    take_part(client, made_up, Writer(events).events)
    answered(app, "creative-low", "davinci-002-2026-01-15")

    key = init_keyfile(tmp_path / "study.key")
    out = tmp_path / "releases"
    result = CliRunner().invoke(
        release,
        [
            "build",
            str(study_folder),
            "--version",
            "1.0.0",
            "--out",
            str(out),
            "--key",
            str(key.path),
            "--license",
            "cc-by-4.0",
            "-j",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Built" in result.output and "coauthor-1.0.0" in result.output
    assert "Left out 1 finished session(s) that no synced MTurk assignment" in result.output
    directory = out / "coauthor-1.0.0"

    for path in directory.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            for secret in (WORKER, EMAIL, "555-2671", "3ASSIGN1", "3HIT1", "workersandbox"):
                assert secret.lower().encode() not in data, (path.name, secret)
    with open(directory / "metadata.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    # A fresh keyed id, not the id the server answers to; the key's table maps it back.
    assert row["session_id"] != session_id and row["session_id"] == released(key, session_id)
    assert ReidentificationTable(key).lookup_session(row["session_id"]) == [
        ("coauthor", session_id)
    ]
    assert not any(
        session_id.encode() in p.read_bytes() for p in directory.rglob("*") if p.is_file()
    )
    assert (
        is_pseudonym(row["worker_id"])
        and row["genre"] == "argumentative"
    )
    with open(directory / "survey.csv", newline="") as handle:
        (answers,) = list(csv.DictReader(handle))
    assert answers["ownership"] == "6" and answers["self_evaluation_collaborated"] == "true"
    assert answers["comments"].startswith(
        "Loved it! Write me at <EMAIL_____________> or call <PHONE_______>."
    )

    card = (directory / "README.md").read_text()
    assert 'license: "cc-by-4.0"' in card
    assert "payment of $2.50" in card and "minimum writing time was 0 seconds" in card
    assert "> **DESCRIPTION:** You are invited to participate" not in card  # markup is gone
    assert "> DESCRIPTION: You are invited to participate in a research study" in card
    # The arms as the released session ran them: a call of a session the release does not carry
    # credits no arm with its model, and the writer never pressed Tab, so no model is recorded
    # (not study.toml's, which never ran for them).
    assert "davinci-002-2026-01-15" not in card
    assert f"| {row['condition']} | L0 | argumentative | not recorded | not recorded |" in card
    assert "| creative-low |" not in card and "No released session ran with `creative-low`" in card
    assert "for about 15 minutes." in card
    assert "| ownership | I feel like the story/essay is mine. | likert7 |" in card
    package = json.loads((directory / "datapackage.json").read_text())
    assert package["licenses"] == [{"name": "cc-by-4.0"}]
