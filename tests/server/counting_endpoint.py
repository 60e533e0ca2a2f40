"""A model endpoint that counts the model calls (POSTs) it answers: `study lm serve`'s app behind a real HTTP
server, so the task server's real OpenAI client talks to it (tests of the model-call guards).
A test can also make its next calls fail (`fail_next`: a model server down for a moment, with
OpenAI's error body), hold them until it says (`hold`, `release`), or look at the study's
database as each call arrives (`on_call`)."""

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
        self.bodies: list[dict] = []  # every request body received, as JSON, in order
        self._lock = threading.Lock()
        self._app = create_model_app(DeterministicBackend(delay=delay))
        self._answered_as = answered_as
        self._failures: list[int] = []  # the HTTP statuses the next calls fail with
        self._open = threading.Event()  # cleared while calls are held
        self._open.set()
        self.on_call = None  # called with no arguments as each call arrives, before it is answered
        self._server = make_server("127.0.0.1", 0, self._wsgi, threaded=True)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.port}/v1"

    def _wsgi(self, environ, start_response):
        if environ["REQUEST_METHOD"] != "POST":
            # Not a model call: `study serve` asks GET /models at start, to warn of an endpoint
            # that does not answer. It is neither counted, held nor failed.
            return self._app(environ, start_response)
        request = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(request)
        with self._lock:
            self.calls += 1
            self.received.append(len(request.decode("utf-8", "replace")))
            self.bodies.append(json.loads(request or b"{}"))
        if self.on_call is not None:
            self.on_call()
        self._open.wait(timeout=60)
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            body = json.dumps({"error": {"message": "the model is down for a moment", "type": "server_error"}}).encode()
            start_response(f"{failure} Failing", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        answer = {}
        body = b"".join(self._app(environ, lambda status, headers, *_: answer.update(status=status, headers=headers)))
        if self._answered_as:
            reply = json.loads(body)
            reply["model"] = self._answered_as
            body = json.dumps(reply).encode()
        headers = [(k, v) for k, v in answer["headers"] if k.lower() != "content-length"]
        start_response(answer["status"], [*headers, ("Content-Length", str(len(body)))])
        return [body]

    def fail_next(self, times: int = 1, status: int = 500) -> None:
        """The next `times` calls (counted as they are answered) fail with HTTP `status`."""
        with self._lock:
            self._failures.extend([status] * times)

    def hold(self) -> None:
        """Calls from now on wait, unanswered, until `release()` (at most a minute)."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def stop(self):
        self._open.set()
        self._server.shutdown()

