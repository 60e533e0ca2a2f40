"""Judges who click at the same moment, on PostgreSQL (several server processes or threads
writing side by side): two judges entering at once both get a task while tasks are left, and a
choice changed before the first one was stored is stored without an error."""

from __future__ import annotations

import tomllib

import pytest
import tomli_w
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import reading
from study.store.judging import judging_ratings
from tests.conftest import CONTACT
from tests.judging.finished import finish_sessions, set_section
from tests.review.at_once import at_once
from tests.store.conftest import empty_database, postgres_url  # noqa: F401 - the cluster, shared as a fixture

pytestmark = pytest.mark.postgres

TEXTS = ["The river forgot its name one spring.", "Cities should plant more trees on every street."]


@pytest.fixture
def app(tmp_path, postgres_url):  # noqa: F811
    """Two texts, one per task: a judging round of two tasks, on PostgreSQL."""
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 1})
    data = tomllib.loads((folder / "study.toml").read_text(encoding="utf-8"))
    data["study"]["database"] = postgres_url
    (folder / "study.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
    study = config.load(folder)
    engine = empty_database(study.database_url)
    finish_sessions(engine, study, TEXTS)
    engine.dispose()
    built = CliRunner().invoke(main, ["judging", "build", str(folder)])
    assert "2 task(s)" in built.output, built.output
    app = create_app(study, suggestion_engine=object())
    yield app
    app.extensions["study.engine"].dispose()


def enter(client, worker: str):
    return client.get(
        "/judge", query_string={"assignmentId": f"3JA{worker}", "workerId": worker, "hitId": "3JH1"}
    )


def test_two_judges_entering_at_once_both_get_a_task_while_two_are_free(app):
    engine = app.extensions["study.engine"]
    clients = [app.test_client(), app.test_client()]

    answers = at_once(
        engine, "DELETE FROM judging_ratings",
        lambda: enter(clients[0], "A1JUDGEONE"), lambda: enter(clients[1], "A1JUDGETWO"),
    )  # fmt: skip

    told = [
        a.get_data(as_text=True).split('data-testid="judging-message">')[-1].split("<")[0]
        for a in answers
        if a.status_code != 302
    ]
    assert not told, f"a judge was turned away while a task was free: {told}"
    assert answers[0].location != answers[1].location


def test_a_choice_changed_before_the_first_was_stored_is_stored_without_an_error(app):
    engine = app.extensions["study.engine"]
    client = app.test_client()
    page = enter(client, "A1JUDGEONE").location
    item = next(
        line.split('data-item="')[1].split('"')[0]
        for line in client.get(page).get_data(as_text=True).splitlines()
        if 'data-item="' in line
    )
    url = f"/api/judging/{page.rsplit('/', 1)[-1]}/ratings"

    def choose(score):
        return client.post(url, json={"ratings": [{"item": item, "score": score}]})

    answers = at_once(engine, "INSERT INTO judging_ratings", lambda: choose(3), lambda: choose(4))

    assert [getattr(a, "status_code", a) for a in answers] == [200, 200]
    with reading(engine) as connection:
        stored = connection.execute(judging_ratings.select()).all()
    assert len(stored) == 1
