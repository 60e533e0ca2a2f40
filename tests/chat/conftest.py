"""A chat study (`study init --paradigm chat`) served with the Flask test client, its
assistants answered by our own model endpoint with the deterministic backend."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from study import config
from study.cli import write_study_files
from tests.conftest import CONTACT


@pytest.fixture
def chat_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "chat-study"
    # As a researcher leaves it before serving: the consent page names a real contact.
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    return folder


@pytest.fixture
def chat_study(chat_folder, model_url) -> config.Study:
    study = config.load(chat_folder)
    return replace(study, suggestions=replace(study.suggestions, endpoint=model_url))


@pytest.fixture
def chat_app(chat_study):
    from study.server import create_app

    return create_app(chat_study)


@pytest.fixture
def chat_client(chat_app):
    return chat_app.test_client()
