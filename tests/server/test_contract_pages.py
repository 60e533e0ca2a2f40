"""Every page's form and query is a declared contract too (schemas/api/pages.schema.json and
review.schema.json): the participant's path, the chat pages, MTurk's entry and the reviewers'
workspace refuse an oversized or unknown field with a 4xx naming it, before any handler runs,
and store nothing."""

from __future__ import annotations

import html

import pytest
from sqlalchemy import func, select

from study.review.web import create_review_app
from study.server.contract import contract_of, is_static
from study.store import reading
from study.store.db import sessions
from study.store.surveys import survey_responses
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 (fixtures)
from tests.chat.flow import choose_intent, start_chat
from tests.review.conftest import (  # noqa: F401 (fixtures)
    add_reviewer, engine, log_in, review_folder, review_study, workspace,
)
from tests.review.sessions import finished_session
from tests.server.flow import post_init, start, to_writing


def _count(app, table) -> int:
    with reading(app.extensions["study.engine"]) as connection:
        return connection.execute(select(func.count()).select_from(table)).scalar_one()


def _stage(app, session_id: str) -> str:
    with reading(app.extensions["study.engine"]) as connection:
        return connection.execute(select(sessions.c.stage).where(sessions.c.session_id == session_id)).scalar_one()


def _said(response) -> str:
    return html.unescape(response.get_data(as_text=True))


def _undeclared(app) -> list[str]:
    # Static files, the app's and a paradigm's blueprint's, take no input to declare.
    return sorted(
        rule.rule for rule in app.url_map.iter_rules()
        if not is_static(rule.endpoint) and contract_of(app.view_functions[rule.endpoint]) is None
    )  # fmt: skip


def test_every_route_of_the_task_server_and_the_workspace_declares_its_contract(app, review_study):
    assert _undeclared(app) == []
    assert _undeclared(create_review_app(review_study)) == []


# -- MTurk's entry ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"assignmentId": "A1", "hitId": "H1", "workerId": "W" * 5000}, "query.workerId"),
        ({"assignmentId": "A1", "hitId": "H1", "workerId": "W1'<script>"}, "query.workerId"),
        # A researcher's own parameters (lang=, a source tag) are let through, within bounds.
        ({"access_code": "lab-1", "utm_source": "m" * 5000}, "query.utm_source"),
        ({"access_code": "lab-1", "another": "yes"}, "query.another"),
    ],
    ids=["worker-id-5000-chars", "worker-id-markup", "own-parameter-5000-chars", "another-not-0-or-1"],
)
def test_a_task_link_breaking_its_query_is_a_400_naming_the_parameter_and_starts_nothing(client, app, query, named):
    response = client.get("/task", query_string=query)

    assert response.status_code == 400 and named in _said(response)
    assert _count(app, sessions) == 0


def test_a_page_that_takes_no_query_names_a_stray_parameter(client):
    session_id = start(client)

    response = client.get(f"/s/{session_id}/consent?debug=1")

    assert response.status_code == 400 and "'debug'" in _said(response)


def test_a_session_id_that_cannot_name_a_session_is_a_404_before_any_lookup(client):
    assert client.get("/s/" + "x" * 5000 + "/consent").status_code == 404


# -- the participant's forms ------------------------------------------------------------------


def test_a_consent_form_of_100000_characters_is_refused_and_the_session_stays(client, app):
    session_id = start(client)

    response = client.post(f"/s/{session_id}/consent", data={"consent": "yes" * 33_334})

    assert response.status_code == 400 and "form.consent" in _said(response)
    assert _stage(app, session_id) == "consent"


def test_an_unknown_form_field_is_named(client, app):
    session_id = start(client)

    response = client.post(f"/s/{session_id}/consent", data={"consent": "yes", "admin": "1"})

    assert response.status_code == 400 and "'admin'" in _said(response)
    assert _stage(app, session_id) == "consent"


def _at_survey(client, session_id: str) -> None:
    to_writing(client, session_id)
    post_init(client, session_id)
    assert client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 0, "text": "P.\n"}).status_code == 200
    assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"}).status_code == 302


@pytest.mark.parametrize(
    ("answers", "named"),
    [
        ({"native_speaker": "Yes", "ownership": "6" * 50_000}, "form.ownership"),
        ({"native_speaker": ["Yes"] * 101}, "form.native_speaker"),
        ({"native_speaker": "Yes", "no such question!": "1"}, "'no such question!'"),
    ],
    ids=["answer-50000-chars", "101-values", "odd-field-name"],
)
def test_a_survey_page_past_its_declared_caps_stores_nothing(client, app, answers, named):
    session_id = start(client)
    _at_survey(client, session_id)

    response = client.post(f"/s/{session_id}/survey", data=answers)

    assert response.status_code == 400 and named in _said(response)
    assert _count(app, survey_responses) == 0 and _stage(app, session_id) == "survey"


def test_a_chat_prewriting_answer_past_its_cap_is_refused_and_the_chat_does_not_start(chat_client, chat_app):
    session_id = start_chat(chat_client)
    choose_intent(chat_client, session_id)

    response = chat_client.post(f"/s/{session_id}/prewriting", data={"q1": "word " * 5000})

    assert response.status_code == 400 and "form.q1" in _said(response)
    assert _stage(chat_app, session_id) == "prewriting"


def test_a_chat_intent_form_of_an_unknown_field_is_refused(chat_client, chat_app):
    session_id = start_chat(chat_client)

    response = chat_client.post(f"/s/{session_id}/intent", data={"intent": "x", "condition": "L3"})

    assert response.status_code == 400 and "'condition'" in _said(response)
    assert _stage(chat_app, session_id) == "intent"


# -- the reviewers' workspace -----------------------------------------------------------------


def test_a_rating_comment_past_its_cap_is_refused_and_no_rating_is_stored(workspace, engine):
    from study.review import ratings

    add_reviewer(engine, "ana")
    finished_session(engine, worker_id="A1WORKER", round_name="qualification")
    client = log_in(workspace, "ana")
    target = client.post("/review/next", data={"csrf_token": client.csrf}).location

    response = client.post(
        f"{target}/rating", data={"score": "2", "comment": "c" * 20_000, "csrf_token": client.csrf}
    )

    assert response.status_code == 400 and "form.comment" in _said(response)
    with reading(engine) as connection:
        assert ratings.all_ratings(connection) == []


def test_a_login_name_of_5000_characters_is_refused_at_the_door(workspace, engine):
    add_reviewer(engine, "ana")

    response = workspace.test_client().post("/review/login", data={"name": "a" * 5000, "password": "x"})

    assert response.status_code == 400 and "form.name" in _said(response)
