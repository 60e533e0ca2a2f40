"""A TCP forwarder between a server under test and PostgreSQL, which a test cuts and mends as a
PostgreSQL restart, a failover or a network cut looks from the server."""

from __future__ import annotations

import socket
import threading

from tests.scale.servers import free_port


class Forwarder:
    """127.0.0.1:port -> PostgreSQL, which `cut` makes unreachable (connections dropped, new
    ones refused) and `mend` reachable again on the same port."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = free_port()
        self.open: list[socket.socket] = []
        self.listener: socket.socket | None = None

    def mend(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def cut(self) -> None:
        # shutdown() before close(): a thread blocked in accept() or recv() on a socket keeps it
        # open (and listening) through a close() alone.
        for end in [self.listener, *self.open]:
            _shut(end)
            end.close()
        self.open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.open += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            _shut(end)


def _shut(end: socket.socket) -> None:
    try:
        end.shutdown(socket.SHUT_RDWR)
    except OSError:  # not connected, or closed already
        pass
