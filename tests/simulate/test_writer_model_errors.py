"""A simulated writer's model endpoint failing: the run falls back and counts the failure, and
what it prints of it (study.simulate.cli) never carries the API key an endpoint echoes; an
endpoint no call can pass (down, or not serving the model named) is refused before any writer."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from click.testing import CliRunner
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from study import model_client
from study.cli import main
from study.simulate.personas import Persona
from study.simulate.writer import SimulatedWriter

KEY = "sk-simulated-writers-key-0123456789"


def test_a_failure_echoing_the_api_key_is_counted_without_it():
    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def refuse():
        return jsonify(error={"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}), 401

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        client = model_client.client(f"http://127.0.0.1:{server.server_port}/v1", KEY, 5.0, max_retries=0)
        writer = SimulatedWriter(Persona("a careful writer"), "Write a {noun}.", "story",
                                 client=client, model="writer-model", seed=1)  # fmt: skip

        assert writer.ask_model("What next?") == ""
    finally:
        server.shutdown()

    (failure,) = writer.decisions.failures
    assert "401" in failure or "Incorrect API key" in failure
    assert KEY not in failure and KEY[:12] not in failure


def _serve(app: Flask) -> tuple[str, Callable[[], None]]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join()

    return f"http://127.0.0.1:{server.server_port}/v1", stop


def test_a_writers_model_that_is_down_is_refused_before_any_writer_enters(pilot_folder, suggestion_model):
    """Every call failing used to leave the personas' habits to play the writers, the run ending
    'finished' with exit 0 and its sessions in the database, though the model named had played none."""
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2", "--suggestions-endpoint",
                                       suggestion_model, "--llm-url", down, "--llm-model", "writer"])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert f"cannot reach the model endpoint at {down}" in result.output
    assert "No writer entered the study. Fix: start the endpoint, or correct --llm-url" in result.output
    assert "writer 0" not in result.output and not (pilot_folder / "study.db").exists()


def test_a_model_name_the_endpoint_does_not_know_is_refused_naming_the_flag(pilot_folder, suggestion_model):
    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def unknown_model():  # as vLLM, Ollama and OpenAI answer a model they do not serve
        name = request.get_json()["model"]
        return jsonify(error={"message": f"The model `{name}` does not exist.", "type": "NotFoundError"}), 404

    url, stop = _serve(app)
    try:
        result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2", "--suggestions-endpoint",
                                           suggestion_model, "--llm-url", url, "--llm-model", "llama3-8b"])  # fmt: skip
    finally:
        stop()
    assert result.exit_code == 1, result.output
    assert "answered HTTP 404: The model `llama3-8b` does not exist." in result.output
    assert "Fix: --llm-model must name a model the endpoint serves (got 'llama3-8b')" in result.output
    assert not (pilot_folder / "study.db").exists()
