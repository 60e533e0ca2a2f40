"""A stand-in for one Prolific answer (a throttle, a page of a list) on a free local port, for
the client's tests that need a shape the emulator does not give."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from werkzeug.serving import make_server


@contextmanager
def serving(app, path: str = "/api/v1/") -> Iterator[str]:
    """Serve the WSGI `app` while the block runs; yields the API's base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.port}{path}"
    finally:
        server.shutdown()
