"""The control arm (paradigm "none"): a condition whose writers have no assistant. Its
configuration calls no model, its suggestion API refuses before any model call, its writers
are not rejected for not asking the AI, and its export keeps it as a condition whose
suggestion counts are empty (not applicable) rather than 0."""

from __future__ import annotations

import csv
import functools
import json

import pytest
from sqlalchemy import select

from study import config
from study.export.coauthor import export_study
from study.mturk.review import propose
from study.server import create_app
from study.review.submissions import all_submissions, collect
from study.store import reading, writing
from study.store.db import suggestion_requests
from tests.server.flow import INIT_EVENT, finish, start, to_writing

CREATIVE_LOW = (
    'name = "creative-low"\ngenre = "creative"\nmode = "completion"\nmodel = "davinci-002"\n'
    "n = 5\nmax_tokens = 30\ntemperature = 0.3\ntop_p = 1\npresence_penalty = 0\nfrequency_penalty = 0\n"
)
CONTROL = 'name = "creative-control"\ngenre = "creative"\nparadigm = "none"\n'


def _with_control(study_folder, endpoint_url: str = ""):
    toml = study_folder / "study.toml"
    text = toml.read_text()
    assert CREATIVE_LOW in text
    text = text.replace(CREATIVE_LOW, CONTROL).replace('endpoint = ""', f'endpoint = "{endpoint_url}"', 1)
    toml.write_text(text)
    return config.load(study_folder)


def test_a_control_condition_has_no_model_and_empty_generation_settings(study_folder):
    study = _with_control(study_folder)
    control = study.condition("creative-control")
    assert control.paradigm == "none" and control.model == ""
    assert set(control.controls().values()) == {""}
    # The other conditions keep their settings as CoAuthor logged them.
    assert study.condition("creative-high").controls()["currentN"] == "5"


@pytest.mark.parametrize("extra, expected", [
    ('model = "davinci-002"\n', "sets model. Fix: remove them; a control condition calls no model"),
    ("temperature = 0.3\nn = 5\n", "sets n, temperature. Fix: remove them"),
])  # fmt: skip
def test_a_control_condition_that_sets_a_model_is_refused_naming_the_fix(study_folder, extra, expected):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(CREATIVE_LOW, CONTROL + extra))
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    assert "conditions[0] ('creative-control') has no assistant" in str(error.value)
    assert expected in str(error.value)


def test_a_condition_without_model_is_told_about_the_control_arm(study_folder):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(CREATIVE_LOW, CREATIVE_LOW.replace('model = "davinci-002"\n', "")))
    with pytest.raises(config.ConfigError) as error:
        config.load(study_folder)
    assert "conditions[0] is missing the key 'model'" in str(error.value)
    assert 'paradigm = "none"' in str(error.value)


def test_the_suggestion_api_refuses_a_control_session_before_any_model_call(study_folder, endpoint_factory):
    endpoint = endpoint_factory()
    app = create_app(_with_control(study_folder, endpoint.url))
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id)  # the first creative session gets the least-used condition
    page = client.get(f"/s/{session_id}/writing").get_data(as_text=True)
    boot = json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])
    assert "suggestionsUrl" not in boot and 'id="suggestions"' not in page
    assert "there is no AI assistant in this session" in page

    response = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon"})
    assert response.status_code == 409
    assert response.json["error"] == "this session has no assistant: it gets no suggestions"
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": "Once upon"})
    assert response.status_code == 409
    assert endpoint.calls == 0
    with reading(app.extensions["study.engine"]) as connection:
        assert connection.execute(select(suggestion_requests)).first() is None


def test_a_control_writer_is_not_asked_whether_they_wrote_with_ai(study_folder):
    client = create_app(_with_control(study_folder), suggestion_engine=object()).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    event = {**INIT_EVENT, "seq": 0, "currentDoc": "Prompt.\n", "currentCursor": 7}
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": [event]}).status_code == 200
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "Prompt.\n"})
    page = client.get(f"/s/{session_id}/evaluation").get_data(as_text=True)
    assert "clear ending" in page and "collaborated" not in page and "wrote my story with AI" not in page and "the requirement of the task" in page
    response = client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes"})
    assert response.location.endswith("/survey")


def test_mturk_review_does_not_reject_a_control_writer_for_not_asking_the_ai():
    assignment = {"assignment_id": "A1", "worker_id": "W1", "hit_id": "H1", "answer": ""}
    session = {"session_id": "s1", "stage": "complete", "writing_started_at": 0.0,
               "writing_finished_at": 700.0, "verification_code": "", "worker_id": "W1",
               "assignment_id": "A1", "hit_id": "H1", "condition": "creative-control"}  # fmt: skip
    decide = functools.partial(propose, assignment, session, 0, min_seconds=600, min_ai_requests=1,
                               approve_feedback="ok")  # fmt: skip
    assert any("asked for suggestions 0 times" in r for r in decide().reasons)
    assert not any("suggestions" in r for r in decide(assistant=False).reasons)


def test_the_reviewers_queue_does_not_disqualify_a_control_writer_for_not_asking_the_ai(study_folder):
    study = _with_control(study_folder)
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    control, assisted = start(client, access_code="lab-1"), start(client, access_code="lab-2")
    to_writing(client, control)
    to_writing(client, assisted, prompt="reincarnation")
    for session_id in (control, assisted):
        finish_any(client, session_id)
    with writing(app.extensions["study.engine"]) as connection:
        collect(connection, study)
        reasons = {row["session_id"]: row["disqualified"] for row in all_submissions(connection)}
    assert reasons[control] is None and "no interaction with the AI" in reasons[assisted]


def test_the_export_keeps_the_control_arm_with_its_suggestion_counts_not_applicable(study_folder, tmp_path):
    study = _with_control(study_folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    control, assisted = start(client, access_code="lab-1"), start(client, access_code="lab-2")
    to_writing(client, control)
    to_writing(client, assisted, prompt="reincarnation")  # the next creative session: creative-high
    for session_id in (control, assisted):
        finish_any(client, session_id)
    export_study(study, tmp_path / "out")
    with open(tmp_path / "out" / "metadata.csv", newline="") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    assert rows[control]["condition"] == "creative-control" and rows[control]["paradigm"] == "none"
    assert [rows[control][c] for c in ("num_query", "num_selected", "perc_selected")] == ["", "", ""]
    assert rows[control]["temperature"] == ""  # no decoding settings: no model
    assert rows[assisted]["condition"] == "creative-high" and rows[assisted]["paradigm"] == "L0"
    assert rows[assisted]["num_query"] == "0" and rows[assisted]["temperature"] == "0.75"


def finish_any(client, session_id: str) -> None:
    """flow.finish, with only the self-evaluation items the session's page shows."""
    page_items = None
    try:
        finish(client, session_id)
        return
    except AssertionError:
        page_items = client.get(f"/s/{session_id}/evaluation").get_data(as_text=True)
    assert "clear_ending" in page_items
    assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes"}).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
