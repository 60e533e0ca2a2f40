"""The participant's path, page by page, with the cases a real study meets."""

from __future__ import annotations

import re
import tomllib

import tomli_w

from study.cli import write_study_files
from study.store import reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.server.flow import finish, post_init, start, to_writing
from tests.server.study_edits import serve_again

MTURK = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001",
         "turkSubmitTo": "https://workersandbox.mturk.com"}  # fmt: skip


def _session(app, session_id):
    with reading(app.extensions["study.engine"]) as connection:
        return session_store.get(connection, session_id)


def test_mturk_preview_shows_the_task_without_starting_a_session(client, app):
    response = client.get("/task", query_string={**MTURK, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert response.status_code == 200
    assert b"preview" in response.data.lower()
    with reading(app.extensions["study.engine"]) as connection:
        assert session_store.all_sessions(connection) == []


def test_entry_without_worker_or_access_code_explains_what_is_missing(client):
    response = client.get("/task")
    assert response.status_code == 400
    assert b"access_code" in response.data
    response = client.get("/task", query_string={"assignmentId": "3A"})
    assert response.status_code == 400 and b"workerId" in response.data


def test_a_worker_is_bound_to_the_assignment_and_hit(client, app):
    session_id = start(client, **MTURK)
    session = _session(app, session_id)
    assert (session["worker_id"], session["assignment_id"], session["hit_id"]) == (
        "A1B2C3D4E5F6G7", "3ASSIGN0001", "3HIT0001",
    )
    assert session["turk_submit_to"] == "https://workersandbox.mturk.com"


def test_a_returning_worker_continues_where_they_left_off(client):
    session_id = start(client, **MTURK)
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    response = client.get("/task", query_string=MTURK)
    assert response.location == f"/s/{session_id}/instructions"


def test_another_worker_cannot_take_over_an_assignment(client):
    start(client, **MTURK)
    response = client.get("/task", query_string={**MTURK, "workerId": "AOTHERWORKER1"})
    assert response.status_code == 400
    assert b"another worker" in response.data


def test_consent_is_required(client):
    session_id = start(client)
    response = client.post(f"/s/{session_id}/consent", data={})
    assert response.status_code == 200
    assert b"Please tick the box" in response.data
    page = client.get(f"/s/{session_id}/consent").data
    assert b'data-testid="consent"' in page and b'data-testid="next"' in page


def test_pages_cannot_be_skipped(client):
    session_id = start(client)
    for stage in ("instructions", "prompt", "writing", "evaluation", "survey", "complete"):
        response = client.get(f"/s/{session_id}/{stage}")
        assert response.location == f"/s/{session_id}/consent", stage


def test_unknown_session_is_404(client):
    assert client.get("/s/" + "0" * 32 + "/consent").status_code == 404
    assert client.get("/s/not-a-session/consent").status_code == 404


def test_writers_choose_among_all_prompts(client):
    session_id = start(client)
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    page = client.get(f"/s/{session_id}/prompt").data.decode()
    assert page.count('data-testid="prompt-option"') == 20
    assert "In my opinion," in page
    response = client.post(f"/s/{session_id}/prompt", data={"prompt": "no-such-prompt"})
    assert response.status_code == 200  # the list again, nothing bound


def test_a_prompt_s_title_heads_its_card_on_the_prompt_page(tmp_path):
    # study.toml's optional [[prompts]] title is documented as shown when writers choose a
    # prompt; a researcher who gives their prompts titles must find them there.
    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    data = tomllib.loads((folder / "study.toml").read_text(encoding="utf-8"))
    data["prompts"][0]["title"] = "The shapeshifter & the dates"
    (folder / "study.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
    client = serve_again(folder)
    session_id = start(client)
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    page = client.get(f"/s/{session_id}/prompt").data.decode()
    card = page.split('class="prompt-card"')[1]
    assert re.search(r"<h2[^>]*>The shapeshifter &amp; the dates</h2>", card), card
    assert "dating guy after guy" in card  # the prompt itself stays under its title
    assert page.count("<h2") == 1  # prompts without a title get no empty heading


def test_conditions_are_balanced_within_a_prompt(client, app):
    conditions = []
    for i in range(4):
        session_id = start(client, access_code=f"writer-{i}")
        to_writing(client, session_id, prompt="pig")
        conditions.append(_session(app, session_id)["condition"])
    assert conditions == ["creative-low", "creative-high", "creative-low", "creative-high"]
    session_id = start(client, access_code="writer-9")
    to_writing(client, session_id, prompt="news")
    assert _session(app, session_id)["condition"] == "argumentative-low"


def test_a_writer_may_take_a_prompt_only_max_per_prompt_times(client, app, study):
    for _ in range(study.max_per_prompt):
        session_id = start(client, access_code="keen")
        to_writing(client, session_id, prompt="pig")
        finish(client, session_id)
        client.get("/task", query_string={"access_code": "keen", "another": "1"})
    session_id = start(client, access_code="keen", another="1")
    client.post(f"/s/{session_id}/consent", data={"consent": "yes"})
    client.post(f"/s/{session_id}/instructions")
    page = client.get(f"/s/{session_id}/prompt").data.decode()
    assert 'value="pig"' not in page
    assert page.count('data-testid="prompt-option"') == 19


def test_finishing_waits_for_the_minimum_time(app, client, study_folder):
    from dataclasses import replace

    from study.server import create_app

    strict = create_app(replace(app.extensions["study"], min_seconds=600),
                        suggestion_engine=object(), engine=app.extensions["study.engine"])
    client = strict.test_client()
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "x"})
    assert response.status_code == 409
    assert "more seconds" in response.json["error"]


def test_finishing_waits_until_every_event_is_stored(client):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 3, "text": "x"})
    assert response.status_code == 409
    assert response.json["missing"] == [1, 2, 3]


def test_self_evaluation_needs_both_requirements(client):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "x"})
    page = client.get(f"/s/{session_id}/evaluation").data.decode()
    assert "My story has a clear ending." in page
    assert "I collaboratively wrote my story with AI." in page
    response = client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes"})
    assert response.status_code == 200 and "Both requirements" in response.data.decode()


def test_essay_wording_for_argumentative_prompts(client):
    session_id = start(client)
    to_writing(client, session_id, prompt="news")
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "x"})
    page = client.get(f"/s/{session_id}/evaluation").data.decode()
    assert "My essay has a clear stance and conclusion." in page


def test_survey_checks_required_answers(client):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "x"})
    client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"})
    response = client.post(f"/s/{session_id}/survey", data={"ownership": "9"})
    page = response.data.decode()
    assert "Choose a point from 1 to 7." in page
    assert page.count("This question needs an answer.") == 3


def test_completion_code_is_unguessable_and_not_the_session_id(client, app):
    codes = set()
    for i in range(3):
        session_id = start(client, access_code=f"w{i}")
        to_writing(client, session_id)
        finish(client, session_id)
        page = client.get(f"/s/{session_id}/complete").data.decode()
        code = re.search(r'data-testid="verification-code">([^<]+)<', page).group(1)
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{12}", code)
        assert code.lower() not in session_id
        codes.add(code)
        session = _session(app, session_id)
        assert session["survey"] and '"ownership": 6' in session["survey"]
    assert len(codes) == 3


def test_a_finished_session_cannot_be_redone(client):
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    finish(client, session_id)
    assert client.get("/task", query_string=MTURK).location == f"/s/{session_id}/complete"
    assert client.get(f"/s/{session_id}/writing").location == f"/s/{session_id}/complete"
    response = client.post(f"/s/{session_id}/prompt", data={"prompt": "pig"})
    assert response.location == f"/s/{session_id}/complete"


def test_mturk_completion_submits_to_turk_submit_to(client):
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    finish(client, session_id)
    page = client.get(f"/s/{session_id}/complete").data.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    assert 'name="assignmentId" value="3ASSIGN0001"' in page


def test_writing_page_carries_no_secrets(client, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    session_id = start(client)
    to_writing(client, session_id)
    page = client.get(f"/s/{session_id}/writing").data.decode()
    assert 'data-testid="editor"' in page
    assert "sk-test-secret-123" not in page
    assert "davinci" not in page  # the model name stays on the server too
    # Nor its decoding settings (issue 25): the event API fills them into the records.
    assert '"currentTemperature": ""' in page and "0.3" not in page


def test_events_lost_in_the_browser_do_not_trap_the_writer(client, app):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    # The browser drained its queue (pending 0) yet events 1..2 never arrived: they are gone.
    response = client.post(
        f"/s/{session_id}/writing/finish", json={"last_seq": 2, "text": "x", "pending": 0}
    )
    assert response.status_code == 200
    assert _session(app, session_id)["missing_events"] == 2


def test_assigned_prompts_go_round_the_study_s_prompts_not_all_to_the_first(study_folder):
    # prompt_selection = "assign": every new writer has used every prompt equally (never), so
    # the tie must not always go to the first prompt, or one prompt (and its genre's
    # conditions) gets every session and the other genre none.
    from study import config
    from study.server import create_app

    path = study_folder / "study.toml"
    path.write_text(path.read_text().replace('prompt_selection = "choose"', 'prompt_selection = "assign"'))
    study = config.load(study_folder)
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    taken = []
    for writer in range(len(study.prompts)):
        session_id = start(client, access_code=f"writer-{writer}")
        assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
        assert client.post(f"/s/{session_id}/instructions").status_code == 302
        client.get(f"/s/{session_id}/prompt")
        taken.append(_session(app, session_id)["prompt_code"])
    assert sorted(taken) == sorted(p.code for p in study.prompts)  # each prompt once
