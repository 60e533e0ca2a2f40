"""Serving the emulator: in the foreground (`study prolific emulate`) or in a thread (tests)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from study.prolific.emulator.state import State
from study.prolific.emulator.wire import Emulator


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:  # tests need no access log
        pass


@dataclass
class Running:
    """An emulator serving in a background thread; `url` is its base URL, `api` the API's."""

    state: State
    app: Emulator
    server: BaseWSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://{self.server.host}:{self.server.port}"

    @property
    def api(self) -> str:
        return self.url + "/api/v1/"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()


def serve_in_thread(state: State, host: str = "127.0.0.1", port: int = 0) -> Running:
    """Start the emulator on `port` (0: any free port) and return at once."""
    app = Emulator(state)
    server = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="prolific-emulator", daemon=True)
    thread.start()
    return Running(state, app, server, thread)


def serve(state: State, host: str = "127.0.0.1", port: int = 8478, announce=None) -> None:
    """Serve until interrupted; `announce(port)` is called once it listens, with the port it
    listens on (0 asks for any free one)."""
    server = make_server(host, port, Emulator(state), threaded=True)
    if announce is not None:
        announce(server.port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
