"""The participant's path against hostile input (issue 10): made-up submit hosts, a finish
that names a huge last_seq, finished sessions read by whoever holds the id, unlisted access
codes and floods of new sessions."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main
from study.store import reading, writing
from study.store import sessions as session_store
from study.store.mturk import mturk_assignments
from tests.server.flow import finish, post_init, start, to_writing

MTURK = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001",
         "turkSubmitTo": "https://www.mturk.com"}  # fmt: skip
ELSEWHERE = {"REMOTE_ADDR": "203.0.113.7"}


def _session(app, session_id):
    with reading(app.extensions["study.engine"]) as connection:
        return session_store.get(connection, session_id)


# -- turkSubmitTo and the page policy ---------------------------------------------------------


@pytest.mark.parametrize(
    "submit_to",
    [
        "javascript:alert(document.domain)//",
        "https://evil.example",
        "https://www.mturk.com.evil.example",
        "https://user@www.mturk.com",
        "http://www.mturk.com",
        "https://www.mturk.com/elsewhere",
        "http://127.0.0.1:8000",  # loopback, but the request came from the internet
    ],
)
def test_a_submit_host_other_than_mturks_is_refused_at_entry(client, app, submit_to):
    response = client.get(
        "/task", query_string={**MTURK, "turkSubmitTo": submit_to}, environ_base=ELSEWHERE
    )
    assert response.status_code == 400
    assert "https://www.mturk.com or https://workersandbox.mturk.com" in response.get_data(as_text=True)
    with reading(app.extensions["study.engine"]) as connection:
        assert session_store.all_sessions(connection) == []


@pytest.mark.parametrize("submit_to", ["https://www.mturk.com", "https://workersandbox.mturk.com/"])
def test_mturks_two_submit_hosts_are_accepted(client, submit_to):
    session_id = start(client, **{**MTURK, "turkSubmitTo": submit_to})
    to_writing(client, session_id)
    finish(client, session_id)
    page = client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    assert f'action="{submit_to.rstrip("/")}/mturk/externalSubmit"' in page


def test_a_submit_host_stored_before_the_check_never_becomes_a_form_action(client, app):
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    finish(client, session_id)
    with writing(app.extensions["study.engine"]) as connection:
        session_store.update_session(connection, session_id, turk_submit_to="javascript:alert(1)//")
    page = client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    assert "javascript:" not in page and "<form" not in page


def test_participant_pages_limit_scripts_forms_and_frames_to_us_and_mturk(client):
    session_id = start(client, **MTURK)
    policy = client.get(f"/s/{session_id}/consent").headers["Content-Security-Policy"]
    rules = dict(rule.strip().split(" ", 1) for rule in policy.split(";"))
    assert rules["script-src"] == "'self'"
    assert rules["form-action"].split() == ["'self'", "https://www.mturk.com", "https://workersandbox.mturk.com"]
    assert "https://evil.example" not in policy
    assert set(rules["frame-ancestors"].split()) <= {
        "'self'", "https://www.mturk.com", "https://workersandbox.mturk.com", "https://worker.mturk.com",
    }


@pytest.mark.parametrize(
    "method, path, frame_ancestors",
    [
        ("GET", "/no-such-page", "'self' https://www.mturk.com https://workersandbox.mturk.com https://worker.mturk.com"),
        ("POST", "/s/" + "a" * 32 + "/complete", "'self' https://www.mturk.com https://workersandbox.mturk.com https://worker.mturk.com"),
        ("GET", "/review/no-such-page", "'none'"),
    ],
)
def test_an_error_page_no_route_answers_keeps_the_page_policy(client, method, path, frame_ancestors):
    """A mistyped link or a wrong method gets Flask's error page: it is a page of this site
    too, and any other site could frame it (or sniff it) if it went out without the policy
    every routed page carries."""
    response = client.open(path, method=method)
    assert response.status_code in (404, 405)
    policy = response.headers.get("Content-Security-Policy", "")
    rules = dict(rule.strip().split(" ", 1) for rule in policy.split(";") if rule.strip())
    assert rules.get("frame-ancestors") == frame_ancestors
    assert rules.get("script-src") == "'self'"
    assert response.headers.get("X-Content-Type-Options") == "nosniff"


# -- finish -----------------------------------------------------------------------------------


def test_a_finish_naming_a_huge_last_seq_is_refused_at_once(client, app):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    started = time.perf_counter()
    response = client.post(
        f"/s/{session_id}/writing/finish", json={"last_seq": 1_000_000_000_000, "text": "x"}
    )
    assert response.status_code == 400 and "last_seq" in response.get_json()["error"]
    assert time.perf_counter() - started < 1
    assert _session(app, session_id)["stage"] == "writing"


def test_a_finish_with_a_gap_counts_the_missing_events_without_listing_them_all(client, app):
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    response = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 19_000, "text": "x"})
    assert response.status_code == 409 and response.get_json()["missing"] == list(range(1, 51))
    response = client.post(
        f"/s/{session_id}/writing/finish", json={"last_seq": 19_000, "text": "x", "pending": 0}
    )
    assert response.status_code == 200
    assert _session(app, session_id)["missing_events"] == 19_000


def test_a_finish_with_no_event_stored_is_refused(client, app):
    session_id = start(client)
    to_writing(client, session_id)
    response = client.post(
        f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "", "pending": 0}
    )
    assert response.status_code == 409
    assert "none of your writing has reached the server" in response.get_json()["error"]
    assert _session(app, session_id)["stage"] == "writing"


# -- the completion page closes -----------------------------------------------------------------


def test_the_completion_page_closes_an_hour_after_the_survey(client, app):
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    finish(client, session_id)
    code = _session(app, session_id)["verification_code"]
    assert code in client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    with writing(app.extensions["study.engine"]) as connection:
        # The worker entered before the survey: the assignment's hour has run out too.
        session_store.update_session(connection, session_id, created_at=time.time() - 3700,
                                     completed_at=time.time() - 3601)  # fmt: skip

    page = client.get(f"/s/{session_id}/complete").get_data(as_text=True)

    assert code not in page and "3ASSIGN0001" not in page and "This session is finished" in page


def test_the_completion_page_closes_once_mturk_has_the_submission(client, app):
    session_id = start(client, **MTURK)
    to_writing(client, session_id)
    finish(client, session_id)
    code = _session(app, session_id)["verification_code"]
    with writing(app.extensions["study.engine"]) as connection:
        connection.execute(mturk_assignments.insert().values(
            environment="sandbox", assignment_id="3ASSIGN0001", hit_id="3HIT0001",
            worker_id=MTURK["workerId"], status="Submitted", synced_at=time.time(),
        ))  # fmt: skip

    page = client.get(f"/s/{session_id}/complete").get_data(as_text=True)

    assert code not in page and "This session is finished" in page


def test_a_lab_participants_completion_page_hides_the_access_code_once_closed(client, app):
    session_id = start(client, access_code="lab-secret-7")
    to_writing(client, session_id)
    finish(client, session_id)
    assert "lab-secret-7" in client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    with writing(app.extensions["study.engine"]) as connection:
        session_store.update_session(connection, session_id, completed_at=time.time() - 7200)
    assert "lab-secret-7" not in client.get(f"/s/{session_id}/complete").get_data(as_text=True)


# -- who may start a session --------------------------------------------------------------------


def _app_with(study_folder, replace: tuple[str, str], extra_files: dict[str, str] | None = None):
    from study.server import create_app

    for name, text in (extra_files or {}).items():
        (study_folder / name).write_text(text)
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(*replace))
    return create_app(config.load(study_folder), suggestion_engine=object())


def test_with_an_access_code_list_only_listed_codes_enter(study_folder):
    app = _app_with(
        study_folder,
        ("[session]\n", '[session]\naccess_codes_file = "codes.txt"\n'),
        {"codes.txt": "# handed out on 2026-11-20\nLAB-001\nLAB-002\n"},
    )
    client = app.test_client()
    assert client.get("/task", query_string={"access_code": "LAB-002"}).status_code == 302
    refused = client.get("/task", query_string={"access_code": "made-up"})
    assert refused.status_code == 400 and "not one of this study" in refused.get_data(as_text=True)


def test_an_access_code_list_that_cannot_be_read_stops_the_server_with_the_fix(study_folder):
    with pytest.raises(config.ConfigError, match="access_codes_file: cannot read .*codes.txt"):
        _app_with(study_folder, ("[session]\n", '[session]\naccess_codes_file = "codes.txt"\n'))


def test_an_access_code_longer_than_the_task_link_carries_stops_the_server_with_its_line(study_folder):
    # /task takes an access code of at most 64 characters: a longer one in the list could
    # never enter, and the participant it was handed to would be turned away.
    long_code = "LAB-" + "7" * 70
    with pytest.raises(config.ConfigError, match=r"codes\.txt line 3: .*74 characters.*at most 64"):
        _app_with(
            study_folder,
            ("[session]\n", '[session]\naccess_codes_file = "codes.txt"\n'),
            {"codes.txt": f"# handed out on 2026-11-20\nLAB-001\n{long_code}\n"},
        )


def test_one_address_may_start_only_so_many_sessions_an_hour(study_folder):
    app = _app_with(study_folder, ("[session]\n", "[session]\nnew_sessions_per_ip_per_hour = 3\n"))
    client = app.test_client()
    statuses = [
        client.get("/task", query_string={"access_code": f"bot-{i}"}, environ_base=ELSEWHERE).status_code
        for i in range(4)
    ]
    assert statuses == [302, 302, 302, 429]
    # Another address, and a writer returning to a session, are not held back.
    other = client.get("/task", query_string={"access_code": "bot-9"}, environ_base={"REMOTE_ADDR": "198.51.100.2"})
    assert other.status_code == 302
    again = client.get("/task", query_string={"access_code": "bot-0"}, environ_base=ELSEWHERE)
    assert again.status_code == 302


# -- the consent page ---------------------------------------------------------------------------


@pytest.mark.parametrize("minutes, words", [(1, "approximately 1 minute."), (10, "approximately 10 minutes.")])
def test_the_consent_page_states_duration_minutes_in_good_english(study_folder, minutes, words):
    app = _app_with(study_folder, ("duration_minutes = 15", f"duration_minutes = {minutes}"))
    client = app.test_client()
    session_id = start(client)
    assert words in client.get(f"/s/{session_id}/consent").get_data(as_text=True)


def test_serve_refuses_a_consent_page_without_a_real_contact(tmp_path):
    from study.cli import write_study_files

    write_study_files(tmp_path / "s")
    result = CliRunner().invoke(main, ["serve", str(tmp_path / "s")])
    assert result.exit_code != 0
    assert "protocol director's name and how to reach them" in result.output and "consent" in result.output


# -- the preview ------------------------------------------------------------------------------

PREVIEW = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT0001"}


@pytest.mark.parametrize("seconds, said", [(90, "Writing takes at least 1 minute 30 seconds."), (0, None)])
def test_the_preview_states_the_minimum_the_timer_holds(study_folder, seconds, said):
    # 90 s is what the timer holds and the instructions promise; the preview read "2 minutes",
    # and a study without a minimum "at least 0 minutes".
    app = _app_with(study_folder, ("min_seconds = 0", f"min_seconds = {seconds}"))
    page = app.test_client().get("/task", query_string=PREVIEW).get_data(as_text=True)
    assert "This is a preview" in page
    if said:
        assert said in page
    else:
        assert "at least" not in page


def test_a_chat_studys_preview_does_not_describe_the_tab_editor(tmp_path):
    from study.cli import write_study_files
    from study.server import create_app
    from tests.conftest import CONTACT

    write_study_files(tmp_path / "chat", paradigm="chat", replacements=CONTACT)
    app = create_app(config.load(tmp_path / "chat"), suggestion_engine=object())
    page = app.test_client().get("/task", query_string=PREVIEW).get_data(as_text=True)
    assert "This is a preview" in page
    # A chat study has no Tab key and no minimum writing time (its minimum is in exchanges).
    assert "Tab key" not in page
    assert "at least 0" not in page


@pytest.mark.parametrize("paradigm", ["proactive", "L1"])
def test_a_proactive_studys_preview_and_instructions_describe_ghost_text_not_the_tab_list(tmp_path, paradigm):
    # They said "press the Tab key: the AI shows suggestions", but in L1-L3 Tab only accepts
    # the grey text that appears when the writer pauses: writers pressed Tab and nothing came.
    from study.cli import write_study_files
    from study.server import create_app
    from tests.conftest import CONTACT

    write_study_files(tmp_path / "study", paradigm=paradigm, replacements=CONTACT)
    client = create_app(config.load(tmp_path / "study"), suggestion_engine=object()).test_client()
    preview = client.get("/task", query_string=PREVIEW).get_data(as_text=True)
    assert "This is a preview" in preview and "Tab key" not in preview
    session_id = start(client, access_code="lab-1")
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    instructions = client.get(f"/s/{session_id}/instructions").get_data(as_text=True)
    assert "press the Tab key" not in instructions
    assert "Shift+Tab" not in instructions
    assert "When you <strong>pause</strong>" in instructions
    assert "press <strong>Tab</strong> to accept it" in instructions


def test_serve_refuses_a_study_toml_that_lost_a_condition_writers_are_still_in(study_folder, monkeypatch):
    # A condition renamed while writers are in it: each of their pages was an Internal Server
    # Error (KeyError) and their event batches failed until the end of the study.
    from study.server import create_app, serving

    study = config.load(study_folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    with reading(create_app(study, suggestion_engine=object()).extensions["study.engine"]) as connection:
        condition = session_store.get(connection, session_id)["condition"]
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace(f'name = "{condition}"', f'name = "{condition}-v2"'))
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    result = CliRunner().invoke(main, ["serve", str(study_folder)])
    assert result.exit_code != 0 and served == []
    assert str(toml) in result.output
    assert f"no entry with name = '{condition}'" in result.output and "1 session(s) not yet complete" in result.output
    assert "Fix: restore" in result.output
