"""Fixtures of the judging tests: the MTurk fixtures (emulator, real boto3, the task server),
and a study with finished texts whose judging round goes through the emulator."""

import boto3
import pytest

from study import config
from study.mturk import client
from study.store import create_tables, make_engine
from tests.judging.finished import finish_sessions, set_section
from tests.mturk.conftest import (  # noqa: F401
    _botocore_session, ctx, emulator, fake_aws, make_ctx, requester, study_folder, task_app,
)

TEXTS = ["One.", "A longer second text for the judges.", "A third one, also long enough."]


@pytest.fixture
def finished_study(study_folder, monkeypatch):
    """The study with three finished texts, a judging round's settings and MTurk through the
    emulator's real wire protocol."""
    monkeypatch.setattr(client, "new_session", lambda: boto3.Session(botocore_session=_botocore_session()))
    set_section(study_folder, "judging", {"unit": "document", "k": 2, "items_per_task": 2, "reward": "$0.60"})
    set_section(study_folder, "mturk", {"budget": "50.00", "task_url": "https://study.example.org/task"})
    study = config.load(study_folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, TEXTS)
    engine.dispose()
    return study_folder
