"""`study serve` warns at its start when no assistant of the study can answer: a study.toml
from `study init` whose [suggestions] nobody pointed at a model (its calls go to the OpenAI API
without a key), or an endpoint that does not answer. It started without a word, and the
researcher learnt of it from the first writers, who read "suggestions are not available right
now" on every Tab. Only a warning: the endpoint may start after the study, and a study that
crashed must start again."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from study.cli import main, write_study_files
from study.server import serving
from tests.conftest import CONTACT
from tests.plan.conftest import edit


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _started(folder, monkeypatch) -> str:
    started = []
    monkeypatch.setattr(serving, "run", lambda app, **options: started.append(app))
    result = CliRunner().invoke(main, ["serve", str(folder), "--port", str(_free_port())])
    assert result.exit_code == 0, result.output
    assert len(started) == 1  # a warning, not a refusal
    return " ".join(result.stderr.split())


@pytest.fixture
def folder(tmp_path, monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    made = tmp_path / "study"
    write_study_files(made, replacements=CONTACT)
    return made


def _point_at(folder, endpoint: str) -> None:
    edit(folder, lambda data: data["suggestions"].update(endpoint=endpoint))


def test_a_study_as_init_wrote_it_is_served_with_the_missing_endpoint_and_key_named(folder, monkeypatch):
    said = _started(folder, monkeypatch)
    assert f"Warning: {folder / 'study.toml'}: [suggestions] endpoint is empty and OPENAI_BASE_URL is not set" in said
    assert "the environment variable OPENAI_API_KEY holding its key is not set" in said
    assert "Fix: set [suggestions] endpoint to your model's OpenAI-compatible URL" in said

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the OpenAI API with a key: nothing to say
    assert "will fail" not in _started(folder, monkeypatch)

    def control_arms_only(data):  # no assistant, no model to reach
        data["conditions"] = [
            {"name": f"{genre}-control", "genre": genre, "paradigm": "none"}
            for genre in ("creative", "argumentative")
        ]

    monkeypatch.delenv("OPENAI_API_KEY")
    edit(folder, control_arms_only)
    assert "will fail" not in _started(folder, monkeypatch)


def test_an_endpoint_that_does_not_answer_is_named_and_one_that_answers_is_not(folder, monkeypatch, model_url):
    down = f"http://127.0.0.1:{_free_port()}/v1"
    _point_at(folder, down)
    said = _started(folder, monkeypatch)
    assert f"the model endpoint at {down} ([suggestions] endpoint) does not answer" in said
    assert "every suggestion and assistant reply will fail" in said
    assert "Fix: start it before participants come, or correct [suggestions] endpoint." in said

    _point_at(folder, model_url)
    assert "will fail" not in _started(folder, monkeypatch)

