"""Fixtures for the review tests: a study with a qualification and a main round, its database,
reviewer accounts, the workspace app and a logged-in client."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import tomli_w

from study import config
from study.cli import write_study_files
from study.review import accounts
from study.store import create_tables, make_engine, writing

# The local MTurk endpoint and the real boto3 client pointed at it (tests/review/test_qualify.py).
from tests.mturk.conftest import emulator, fake_aws, requester  # noqa: F401

HERE = Path(__file__).resolve().parent
PASSWORD = "correct horse battery"

ROUNDS = [
    {"name": "qualification", "kind": "qualification", "prompts": ["shapeshifter", "screen"]},
    {"name": "main", "kind": "main", "requires": "qualification"},
]


def set_sections(folder: Path, **sections) -> None:
    """Replace top-level sections of the study's study.toml."""
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data.update(sections)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


@pytest.fixture
def review_folder(tmp_path) -> Path:
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    set_sections(folder, rounds=ROUNDS, review={"ratings_per_submission": 2})
    return folder


@pytest.fixture
def review_study(review_folder) -> config.Study:
    return config.load(review_folder)


@pytest.fixture
def plain_study(tmp_path) -> config.Study:
    """A study that declares no rounds (as `study init` makes it), in its own folder."""
    folder = tmp_path / "plain"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    return config.load(folder)


@pytest.fixture
def engine(review_study):
    engine = make_engine(review_study.database_url)
    create_tables(engine)
    yield engine
    engine.dispose()


def add_reviewer(engine, name: str, role: str = "reviewer") -> dict:
    with writing(engine) as connection:
        return accounts.add(connection, name, PASSWORD, role=role)


def rated_by_two(engine, study, *scores: int) -> list[str]:
    """Reviewers ana and ben each rate the study's collected submissions, in order, with
    `scores` (one score per submission); returns the submission ids."""
    from study.review import ratings as rating_store
    from study.review import submissions

    reviewers = [add_reviewer(engine, name) for name in ("ana", "ben")]
    with writing(engine) as connection:
        ids = submissions.collect(connection, study)
        assert len(ids) == len(scores), ids
        for reviewer in reviewers:
            for submission_id, score in zip(ids, scores):
                rating_store.rate(connection, submission_id, reviewer, score, "", scores=(1, 2, 3, 4, 5))
    return ids


@pytest.fixture
def workspace(review_study, engine):
    from study.review.web import create_review_app

    return create_review_app(review_study, engine=engine)


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def log_in(app, name: str, password: str = PASSWORD):
    """A test client logged in as `name`, with its CSRF token as `client.csrf`."""
    client = app.test_client()
    form = client.get("/review/login").get_data(as_text=True)
    response = client.post(
        "/review/login", data={"name": name, "password": password, "csrf_token": csrf_of(form)}
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    client.csrf = csrf_of(client.get("/review/").get_data(as_text=True))
    return client
