"""Reviewers and researchers who click at the same moment, on PostgreSQL (several server
processes or threads writing side by side): no submission is handed out past its places, a new
submission is listed once, a rating or a decision sent twice at once is stored once, and nobody
gets an error page for it. And a writer opening two qualification HITs at once enters the
round once."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import func, select

from study.store import reading
from study.store.review_tables import review_assignments, review_decisions, review_submissions
from study.review import ratings as rating_store
from tests.review.at_once import at_once
from tests.review.conftest import add_reviewer, log_in, set_sections
from tests.review.sessions import finished_session
from tests.store.conftest import empty_database, postgres_url  # noqa: F401 - the cluster, shared as a fixture

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(review_study, postgres_url):  # noqa: F811
    engine = empty_database(postgres_url)
    yield engine
    engine.dispose()


@pytest.fixture
def workspace(review_study, engine, postgres_url):  # noqa: F811
    from study.review.web import create_review_app

    pg_study = dataclasses.replace(review_study, database_url=postgres_url)
    return create_review_app(pg_study, engine=engine)


def _next(client):
    return client.post("/review/next", data={"csrf_token": client.csrf})


def test_two_reviewers_asking_at_once_never_share_a_submissions_last_place(
    review_folder, engine, postgres_url  # noqa: F811
):
    from study import config
    from study.review.web import create_review_app

    set_sections(review_folder, review={"ratings_per_submission": 1})
    one_rating = dataclasses.replace(config.load(review_folder), database_url=postgres_url)
    app = create_review_app(one_rating, engine=engine)
    for i in range(2):
        finished_session(engine, worker_id=f"A1W{i}", round_name="qualification", completed_at=1000 + i)
    add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    clients = [log_in(app, "ana"), log_in(app, "ben")]  # their home pages list both sessions

    answers = at_once(engine, "INSERT INTO review_assignments", *(lambda c=c: _next(c) for c in clients))

    assert [a.status_code for a in answers] == [302, 302], answers
    given = [a.location.rsplit("/", 1)[-1] for a in answers]
    assert given[0] != given[1], (
        f"both reviewers were given {given[0]}, which needs one rating, while the other "
        "submission waits"
    )
    with reading(engine) as connection:
        held = connection.execute(
            select(review_assignments.c.submission_id, func.count())
            .group_by(review_assignments.c.submission_id)
        ).all()
    assert sorted(count for _, count in held) == [1, 1]


def test_two_reviewers_opening_the_workspace_at_once_list_a_new_submission_once(
    workspace, engine
):
    finished_session(engine, worker_id="A1NEWWRITER", round_name="qualification")
    add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    clients = [log_in(workspace, "ana"), log_in(workspace, "ben")]
    # log_in opened the home page, which lists the session: a second writer finishes after.
    finished_session(engine, worker_id="A1LATEWRITER", round_name="qualification")

    answers = at_once(
        engine, "INSERT INTO review_submissions", *(lambda c=c: c.get("/review/") for c in clients)
    )

    assert [getattr(a, "status_code", a) for a in answers] == [200, 200]
    with reading(engine) as connection:
        listed = connection.execute(select(func.count()).select_from(review_submissions)).scalar()
    assert listed == 2


def test_a_rating_sent_twice_at_once_is_stored_once_without_an_error_page(workspace, engine):
    finished_session(engine, worker_id="A1WRITER", round_name="qualification")
    add_reviewer(engine, "ana")
    client = log_in(workspace, "ana")
    submission_id = _next(client).location.rsplit("/", 1)[-1]

    def rate(score):
        return client.post(
            f"/review/s/{submission_id}/rating",
            data={"csrf_token": client.csrf, "score": str(score), "comment": ""},
            headers={"Accept": "application/json"},
        )

    answers = at_once(engine, "INSERT INTO review_ratings", lambda: rate(3), lambda: rate(4))

    assert [getattr(a, "status_code", a) for a in answers] == [200, 200]
    with reading(engine) as connection:
        stored = rating_store.of_submission(connection, submission_id)
    assert len(stored) == 1 and stored[0]["score"] in (3, 4)


def test_two_tabs_changing_one_rating_at_once_save_one_and_refuse_the_other(workspace, engine):
    # Both tabs show version 1 of ana's rating and send a change at the same moment: the one
    # that takes its turn second finds version 2 and is refused, never writing over the first.
    finished_session(engine, worker_id="A1WRITER", round_name="qualification")
    add_reviewer(engine, "ana")
    client = log_in(workspace, "ana")
    submission_id = _next(client).location.rsplit("/", 1)[-1]
    url = f"/review/s/{submission_id}/rating"
    as_json = {"Accept": "application/json"}
    client.post(url, data={"csrf_token": client.csrf, "score": "3", "version": "0"}, headers=as_json)

    def change(score, comment):
        return client.post(url, data={"csrf_token": client.csrf, "score": str(score),
                                      "comment": comment, "version": "1"}, headers=as_json)  # fmt: skip

    answers = at_once(engine, "UPDATE review_ratings", lambda: change(4, "tab one"), lambda: change(2, "tab two"))

    assert sorted(getattr(a, "status_code", a) for a in answers) == [200, 409], answers
    saved = next(a for a in answers if a.status_code == 200).json
    refused = next(a for a in answers if a.status_code == 409).json
    assert refused["current"]["comment"] == saved["comment"] and refused["current"]["version"] == 2
    with reading(engine) as connection:
        (stored,) = rating_store.of_submission(connection, submission_id)
    assert (stored["score"], stored["comment"], stored["version"]) == (saved["score"], saved["comment"], 2)


def test_a_decision_sent_twice_at_once_is_stored_once(workspace, engine):
    finished_session(engine, worker_id="A1WRITER", round_name="qualification")
    add_reviewer(engine, "rita", role="researcher"), add_reviewer(engine, "ruth", role="researcher")
    clients = [log_in(workspace, "rita"), log_in(workspace, "ruth")]
    with reading(engine) as connection:
        (submission_id,) = connection.execute(select(review_submissions.c.submission_id)).scalars()

    def decide(client, score):
        return client.post(
            f"/review/s/{submission_id}/decision",
            data={"csrf_token": client.csrf, "score": str(score), "note": "decided"},
        )

    answers = at_once(
        engine, "INSERT INTO review_decisions",
        lambda: decide(clients[0], 4), lambda: decide(clients[1], 5),
    )  # fmt: skip

    assert [getattr(a, "status_code", a) for a in answers] == [302, 302]
    with reading(engine) as connection:
        decided = connection.execute(select(review_decisions.c.score)).scalars().all()
    assert len(decided) == 1


def test_a_writer_opening_two_qualification_hits_at_once_enters_the_round_once(
    tmp_path, postgres_url, engine  # noqa: F811
):
    from study import config
    from study.cli import write_study_files
    from study.server import create_app
    from study.store.db import sessions
    from tests.conftest import CONTACT
    from tests.review.conftest import ROUNDS

    folder = tmp_path / "tasks"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    set_sections(folder, rounds=ROUNDS)
    task_study = dataclasses.replace(config.load(folder), database_url=postgres_url)
    app = create_app(task_study, suggestion_engine=object())
    clients = [app.test_client(), app.test_client()]

    def enter(client, assignment_id):
        return client.get("/task", query_string={
            "round": "qualification", "assignmentId": assignment_id, "workerId": "A1TWOTABS",
            "hitId": f"HIT{assignment_id}",
        })  # fmt: skip

    answers = at_once(
        app.extensions["study.engine"], "INSERT INTO sessions",
        lambda: enter(clients[0], "3QA1"), lambda: enter(clients[1], "3QA2"),
    )  # fmt: skip

    with reading(engine) as connection:
        started = connection.execute(
            select(func.count()).select_from(sessions).where(sessions.c.worker_id == "A1TWOTABS")
        ).scalar()
    assert started == 1, "the writer started the qualification round twice (two HITs to pay)"
    assert sorted(a.status_code for a in answers) == [302, 403]
    refused = next(a for a in answers if a.status_code == 403).get_data(as_text=True)
    assert "already taken part in the qualification round" in refused
