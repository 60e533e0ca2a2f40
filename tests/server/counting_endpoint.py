"""A model endpoint that counts the calls it answers: `study lm serve`'s app behind a real HTTP
server, so the task server's real OpenAI client talks to it (tests of the model-call guards)."""

from __future__ import annotations

import io
import json
import threading

from werkzeug.serving import make_server

from study.lm.backends import DeterministicBackend
from study.lm.server import create_app as create_model_app


class CountingEndpoint:
    """`study lm serve`'s app behind a real HTTP server, counting the calls it answers and
    optionally naming another model in its replies (as OpenAI names a dated version)."""

    def __init__(self, delay: float = 0.0, answered_as: str | None = None) -> None:
        self.calls = 0
        # The characters of every request body received, in order: what the model was sent.
        self.received: list[int] = []
        self._lock = threading.Lock()
        self._app = create_model_app(DeterministicBackend(delay=delay))
        self._answered_as = answered_as
        self._server = make_server("127.0.0.1", 0, self._wsgi, threaded=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.port}/v1"

    def _wsgi(self, environ, start_response):
        request = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(request)
        with self._lock:
            self.calls += 1
            self.received.append(len(request.decode("utf-8", "replace")))
        answer = {}
        body = b"".join(self._app(environ, lambda status, headers, *_: answer.update(status=status, headers=headers)))
        if self._answered_as:
            reply = json.loads(body)
            reply["model"] = self._answered_as
            body = json.dumps(reply).encode()
        headers = [(k, v) for k, v in answer["headers"] if k.lower() != "content-length"]
        start_response(answer["status"], [*headers, ("Content-Length", str(len(body)))])
        return [body]

    def stop(self):
        self._server.shutdown()

