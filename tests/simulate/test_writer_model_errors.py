"""A simulated writer's model endpoint failing: the run falls back and counts the failure, and
what it prints of it (study.simulate.cli) never carries the API key an endpoint echoes."""

from __future__ import annotations

import threading

from flask import Flask, jsonify
from werkzeug.serving import make_server

from study import model_client
from study.simulate.personas import Persona
from study.simulate.writer import SimulatedWriter

KEY = "sk-simulated-writers-key-0123456789"


def test_a_failure_echoing_the_api_key_is_counted_without_it():
    app = Flask(__name__)

    @app.post("/v1/chat/completions")
    def refuse():
        return jsonify(error={"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}), 401

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
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
