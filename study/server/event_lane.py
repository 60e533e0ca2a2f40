"""The event API's fast lane: a well-formed batch goes to its view without Flask's request
machinery.

Every writer's editor posts a batch about once a second, so at a 1,000-writer launch the event
API is nearly all of the server's work, and its budget is about 1 ms of CPU per request (issue
17). Flask's request context, URL matching, before/after hooks and response building cost about
0.15 ms of that for a view that needs none of them. So this WSGI middleware answers the common
case itself: `POST /api/sessions/<session id>/events` with no query, a body within
[session] max_request_bytes that is JSON and passes the door's check of
schemas/event-batch.schema.json (study.server.contract, the same compiled predicate). It runs
the view's own work (study.server.events_api.acknowledge), which needs no Flask context, and
counts the request for `study status` as the activity hook would. A stored batch's 200 goes to
the server as its bytes and the two headers werkzeug's response would give it, without building
that response. A request at low load pays for every piece of code it runs: werkzeug's response
object was about a tenth of an event request's CPU at 200 writers, and pushing and popping an
app context 3-5% of a batch's (docs/benchmarks.md).

Everything else goes to Flask unchanged, and so do the lane's own doubts: a body the predicate
refuses (the door words the error), a batch the view refuses or a session it does not find (so
404, 409 and 422 answers come from Flask's view and error handlers, and read the same), and an
exception in the view. Flask then runs the view again: storing a batch is idempotent (events
are keyed by their seq, and a refused batch wrote nothing), exactly as the browser's own resend
is. A browser cannot tell which path answered (tests/store/test_event_lane.py holds both to the
same answers).
"""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from functools import partial

import orjson
from flask import Flask

from study import precedence
from study.server import contract, events_api

_PATH = re.compile(r"/api/sessions/([0-9A-Za-z]{32})/events")
_BODY = "event-batch.schema.json"


class EventLane:
    def __init__(self, app: Flask, flask_wsgi: Callable, max_bytes: int) -> None:
        self.app = app
        self.flask_wsgi = flask_wsgi  # Flask's own wsgi_app (and what wraps it, e.g. ProxyFix)
        self.max_bytes = max_bytes
        self.passes = contract.fast_check(_BODY)
        # At most `limit`'s number of batches at once; unlimited: as many as the server's threads.
        self.gate: AbstractContextManager = nullcontext()

    def limit(self, batches: int) -> None:
        """Handle at most `batches` event batches at once; the rest wait, off the GIL. `study
        serve` gives its workers a thread for each model call beside its --threads
        (study.server.serving.model_call_threads); this keeps those extra threads for the
        model calls: more batches handled side by side only take turns at the GIL, each with
        its own switches."""
        self.gate = threading.BoundedSemaphore(batches)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        match = None
        if environ.get("REQUEST_METHOD") == "POST" and not environ.get("QUERY_STRING"):
            match = _PATH.fullmatch(environ.get("PATH_INFO", ""))
        length = environ.get("CONTENT_LENGTH") or ""
        if match is None or not length.isdecimal() or int(length) > self.max_bytes:
            return self.flask_wsgi(environ, start_response)
        body = environ["wsgi.input"].read(int(length))
        precedence.give_way()  # to the suggestions a writer is waiting for (study.precedence)
        with self.gate:
            answer = self._answer(match.group(1), body)
        if answer is None:  # Flask answers, from the same bytes
            environ["wsgi.input"] = io.BytesIO(body)
            return self.flask_wsgi(environ, start_response)
        return answer(environ, start_response)

    def _answer(self, session_id: str, body: bytes):
        started = time.perf_counter()
        try:
            batch = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        if not self.passes(batch):
            return None
        try:
            answer = events_api.acknowledge(self.app, session_id, batch)
        except Exception:  # noqa: BLE001 - Flask meets it again and answers as it does (a 404 too)
            return None
        if type(answer) is not events_api.Acknowledgement:  # a refusal: Flask words it
            return None
        event_ms = (time.perf_counter() - started) * 1000
        activity = self.app.extensions["study.activity"]
        return partial(_acknowledged, answer, activity.after_sending(event_ms, False, False))


def _acknowledged(body: bytes, then: Callable[[], None] | None, environ: dict, start_response: Callable):
    """A stored batch's 200, with the headers werkzeug's response would give it; `then`, if
    any, once the server has sent it (WSGI's close())."""
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body] if then is None else _ThenClose(body, then)


class _ThenClose:
    """A body of one piece, and what to do once it is sent: the activity interval due, stored
    (study.server.activity), as werkzeug's call_on_close would."""

    def __init__(self, body: bytes, then: Callable[[], None]) -> None:
        self.body, self.then = body, then

    def __iter__(self) -> Iterator[bytes]:
        yield self.body

    def close(self) -> None:
        self.then()


def install(app: Flask, max_bytes: int) -> None:
    """Put the lane in front of everything that wraps the app (call it last)."""
    app.wsgi_app = EventLane(app, app.wsgi_app, max_bytes)
