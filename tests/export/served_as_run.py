"""A study whose condition is edited in study.toml between the sessions it serves, as a
researcher does between rounds (a model swapped, a temperature raised, its name kept): for the
tests that the export, the report and a release describe each session as it ran
(study.export.as_run, study.export.settings_as_run)."""

from __future__ import annotations

import json

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.store import sessions as session_store
from study.store import writing
from tests.conftest import COAUTHOR, CONTACT
from tests.release.conftest import SMALLEST
from tests.release.test_build_study import synced, take_part
from tests.server.flow import to_writing

ARM = "creative-high"  # temperature 0.75 and davinci-002 in `study init`'s study.toml
SWAPPED = "gpt-3.5-turbo-instruct"


def a_study(tmp_path, model_url, **replacements):
    """`study init`'s study, asking `model_url`'s model; `replacements` edit its study.toml."""
    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        "min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{model_url}"', **CONTACT,
        **replacements,
    })  # fmt: skip
    return folder


def serve_one(folder, worker: str, *, asks: bool) -> None:
    """A synced MTurk worker writes a session of ARM with study.toml as it is now (a `study serve`
    started afresh), pressing Tab once if `asks`."""
    study = config.load(folder)
    app = create_app(study)
    client = app.test_client()
    entry = {"workerId": worker, "assignmentId": f"3A{worker}", "hitId": "3HIT1",
             "turkSubmitTo": "https://workersandbox.mturk.com"}  # fmt: skip
    session_id = client.get("/task", query_string=entry).location.split("/")[2]
    to_writing(client, session_id, prompt="shapeshifter")
    with writing(app.extensions["study.engine"]) as connection:  # every session in the same arm
        session_store.update_session(connection, session_id, condition=ARM, paradigm=study.condition(ARM).paradigm)
    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]

    def press_tab():
        answer = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "The door opened"})
        assert answer.status_code == 200, answer.json

    take_part(client, session_id, events, press_tab if asks else None)
    synced(app, f"3A{worker}", worker)
    app.extensions["study.engine"].dispose()


def change_arm(folder, old: str, new: str) -> None:
    """The researcher edits ARM's block of study.toml, keeping its name."""
    path = folder / "study.toml"
    text = path.read_text()
    at = text.index(f'name = "{ARM}"')
    end = text.index("[[conditions]]", at)
    assert old in text[at:end]
    path.write_text(text[:at] + text[at:end].replace(old, new) + text[end:])
