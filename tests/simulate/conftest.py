"""A study folder, a local suggestion model, and a scripted writers' model, all over real HTTP.

The writers' model speaks OpenAI's chat protocol through the project's own model endpoint
(`study.lm.server`) with a backend that answers like an instruction-following model would, so
the simulator's real client code parses real responses. (The deterministic backend answers in
plain sentences, never JSON: it exercises the simulator's fallback instead.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from study.cli import write_study_files
from study.lm.backends import DeterministicBackend, Generation
from study.lm.server import serve_in_thread
from tests.conftest import CONTACT

SCRIPTED_TEXT = "The lighthouse keeper counted the boats twice."


class ScriptedWriterBackend:
    """Writes a sentence, asks for suggestions, accepts the second one; finishes at 40 words;
    answers 6 on every 7-point item and "No" on choices."""

    model_id = "scripted-writer"

    def generate(self, prompt: str, **_decoding) -> list[Generation]:
        asked = prompt[prompt.rfind("User:"):]
        if "Which one do you accept" in asked:
            reply = {"choice": 2}
        elif "survey question" in asked:
            options = re.search(r"one of: (.*)\.", asked)
            reply = {"answer": "6" if options and "7" in options.group(1) else
                     ("No" if options else "It was fine.")}
        else:
            words = int(re.search(r"It has (\d+) words", asked).group(1))
            if words >= 40:
                reply = {"action": "finish"}
            elif asked.split(">>>")[0].rstrip().endswith(SCRIPTED_TEXT):  # write, ask, write, ...
                reply = {"action": "ask"}
            else:
                reply = {"action": "write", "text": SCRIPTED_TEXT}
        text = json.dumps(reply)
        return [Generation(text, [0.0] * len(text), "stop", list(text))]

    def format_chat(self, messages) -> str:
        return "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def pilot(folder, writers_backend, *, writers: int, model: str, suggestions: str):
    """`study simulate FOLDER` with `writers` writers whose model is `writers_backend`, served
    over HTTP for the run, and the study's suggestions from `suggestions`; the CLI's result."""
    from click.testing import CliRunner

    from study.cli import main

    writers_url, stop = serve_in_thread(writers_backend)
    try:
        return CliRunner().invoke(main, ["simulate", str(folder), "--writers", str(writers), "--llm-url", writers_url,
                                         "--llm-model", model, "--suggestions-endpoint", suggestions])  # fmt: skip
    finally:
        stop()


def inserted(record) -> str:
    """The text an event's delta inserts ("" for none)."""
    delta = record["textDelta"]
    return "".join(op.get("insert", "") for op in delta["ops"]) if isinstance(delta, dict) else ""


@pytest.fixture(scope="module")
def suggestion_model():
    base_url, stop = serve_in_thread(DeterministicBackend())
    yield base_url
    stop()


@pytest.fixture(scope="module")
def writers_model():
    base_url, stop = serve_in_thread(ScriptedWriterBackend())
    yield base_url
    stop()


@pytest.fixture
def pilot_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pilot"
    # Its consent page names a contact: the pilot's release quotes it (study release build refuses the placeholder).
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 1", **CONTACT})
    return folder
