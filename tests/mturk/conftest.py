"""Fixtures for the MTurk tests: the emulator serving in a thread, the real boto3 client pointed
at it through endpoint_url, a study made by `study init`, and the real task server."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import boto3
import botocore.session
import pytest
import tomli_w

from study import config
from study.cli import write_study_files
from study.mturk import client, posting, settings
from study.mturk.context import open_context
from study.mturk.emulator import State, serve_in_thread

@pytest.fixture
def fake_aws(monkeypatch, tmp_path):
    """Credentials for signing requests to the emulator; never the machine's real ones."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEMULATOR")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "emulator-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emulator(tmp_path, fake_aws):
    running = serve_in_thread(State(tmp_path / "mturk-emulator.json"))
    yield running
    running.stop()


@functools.cache
def _botocore_session():
    # Loading botocore's data files takes a good part of a second; share them across tests.
    return botocore.session.get_session()


def connect(endpoint_url: str, *, live: bool = False) -> client.Requester:
    """The real boto3 client, as `study mturk --endpoint-url` builds it."""
    return client.connect(
        live=live,
        endpoint_url=endpoint_url,
        session=boto3.Session(botocore_session=_botocore_session()),
    )


@pytest.fixture
def requester(emulator):
    return connect(emulator.url)


@pytest.fixture
def study_folder(tmp_path) -> Path:
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0"})
    return folder


def with_mturk(folder: Path, **values) -> None:
    """Set keys of the [mturk] section in the study's study.toml (whether or not it has one)."""
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data.setdefault("mturk", {}).update(values)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


@pytest.fixture
def make_ctx(study_folder, requester):
    """A Context for the study with `[mturk]` values given as keyword arguments."""

    def make(account=None, **mturk):
        study = config.load(study_folder)
        study = replace(study, raw={**study.raw, "mturk": mturk})
        return open_context(study, settings.from_study(study), account or requester)

    return make


@pytest.fixture
def ctx(make_ctx):
    return make_ctx(budget="1000.00")


def with_model(study, model_url: str):
    return replace(study, suggestions=replace(study.suggestions, endpoint=model_url))


@pytest.fixture
def task_app(ctx, model_url):
    """The real task server on the same study and database as `ctx`."""
    from study.server import create_app

    return create_app(with_model(ctx.study, model_url), engine=ctx.engine)


TASK_URL = "https://study.example.org/task?round=main&lang=en"


def post_hit(ctx, *, assignments: int = 1, reward: str = "2.50") -> str:
    """Post one HIT for the study and return its id."""
    posted = posting.post(
        ctx, hits=1, assignments=assignments, reward=Decimal(reward), task_url=TASK_URL
    )
    return posted.hits[0]["hit_id"]


@pytest.fixture
def cli(emulator, monkeypatch):
    """`study mturk ...` as a researcher types it, against the emulator unless `where` says
    otherwise; only botocore's data files are shared between commands, for speed."""
    from click.testing import CliRunner

    from study.mturk.cli import mturk

    monkeypatch.setattr(
        client, "new_session", lambda: boto3.Session(botocore_session=_botocore_session())
    )

    def invoke(*args, input=None, where=("--endpoint-url", emulator.url)):
        return CliRunner().invoke(mturk, [*args, *where], input=input, catch_exceptions=False)

    return invoke


def new_study(folder: Path, pay: str = "$2.50", **mturk) -> Path:
    """A study made as `study init` makes one, with the consent page's pay and `[mturk]` values."""
    write_study_files(
        folder,
        replacements={"min_seconds = 600": "min_seconds = 0", 'pay = "$2.50"': f'pay = "{pay}"'},
    )
    with_mturk(folder, **mturk)
    return folder
