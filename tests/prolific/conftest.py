"""Fixtures for the Prolific provider's tests: the Prolific emulator serving in a thread on a
free port, the real provider code (study.prolific) talking to it over HTTP with its token, a
study made by `study init`, and the real task server on the same database."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
import tomli_w

from study import config
from study.cli import write_study_files
from study.prolific import client, settings
from study.prolific.context import open_context
from study.prolific.emulator import State, serve_in_thread
from tests.conftest import CONTACT


def _workspace(state: State, monkeypatch):
    running = serve_in_thread(state)
    monkeypatch.setenv("PROLIFIC_TOKEN", running.state.token)
    monkeypatch.setenv("PROLIFIC_API_URL", running.api)
    return running


@pytest.fixture
def prolific(tmp_path, monkeypatch):
    """The emulator, with PROLIFIC_TOKEN and PROLIFIC_API_URL set as a researcher sets them."""
    running = _workspace(State(tmp_path / "prolific-emulator.json"), monkeypatch)
    yield running
    running.stop()


@pytest.fixture
def pound_workspace(tmp_path, monkeypatch):
    """An emulated workspace whose currency is pounds, as a UK researcher's is (`prolific`'s
    pays in dollars)."""
    running = _workspace(State(tmp_path / "pounds.json", currency="GBP"), monkeypatch)
    yield running
    running.stop()


@pytest.fixture
def study_folder(tmp_path) -> Path:
    folder = tmp_path / "study"
    # As a researcher leaves it before serving: the consent page names a real contact.
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    return folder


def with_prolific(folder: Path, **values) -> None:
    """Set keys of [prolific] in the study's study.toml."""
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data.setdefault("prolific", {}).update(values)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def with_pay(folder: Path, pay: str) -> None:
    """Set [study] pay, the pay the consent page promises."""
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["study"]["pay"] = pay
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


TASK_URL = "https://study.example.org/task"


@pytest.fixture
def make_ctx(study_folder, prolific):
    """A Context for the study with `[prolific]` values given as keyword arguments; finished
    participants are sent to the emulator's completion URL."""

    def make(**values):
        section = {"completion_url": prolific.url + "/submissions/complete", "task_url": TASK_URL,
                   "reward": "2.50", "estimated_minutes": 10, **values}  # fmt: skip
        study = config.load(study_folder)
        study = replace(study, raw={**study.raw, "prolific": section})
        return open_context(study, settings.from_study(study), client.connect())

    return make


@pytest.fixture
def ctx(make_ctx):
    return make_ctx(budget="1000.00")


@pytest.fixture
def task_app(ctx, model_url):
    """The real task server on the same study and database as `ctx`."""
    from study.server import create_app

    study = replace(ctx.study, suggestions=replace(ctx.study.suggestions, endpoint=model_url))
    return create_app(study, engine=ctx.engine)


@pytest.fixture
def task_client(task_app):
    return task_app.test_client()
