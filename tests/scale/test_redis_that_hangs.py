"""A Redis that stops answering (its host gone without a reset, a partition, a Redis blocked by
a slow command) while the study runs on SQLite with STUDY_REDIS_URL: the start throttle's count
waits for Redis up to its socket timeout (2 s) and then /task answers 503 (README, "Throttle").
The writers already writing must not wait with it: their event batches take SQLite's write lock,
which a start must not hold while it waits on Redis."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from study import config
from study.server import create_app
from tests.server.flow import INIT_EVENT, post_init, start, to_writing

ELSEWHERE = {"REMOTE_ADDR": "203.0.113.7"}  # not loopback: the throttle counts it


class HangingRedis:
    """Answers PING and the client's set-up commands; once `hang` is set, never answers a
    script (the start throttle's count)."""

    def __init__(self) -> None:
        self.hang = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.connections: list[socket.socket] = []
        self.threads[0].start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            self.threads.append(threading.Thread(target=self._serve, args=(connection,), daemon=True))
            self.threads[-1].start()

    def _serve(self, connection: socket.socket) -> None:
        reader = connection.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                count = int(line[1:])
                words = []
                for _ in range(count):
                    size = int(reader.readline()[1:])
                    words.append(reader.read(size + 2)[:-2].upper())
                if words[0] == b"HELLO":  # redis-py speaks RESP3
                    connection.sendall(b"%1\r\n$5\r\nproto\r\n:3\r\n")
                elif words[0] == b"PING":
                    connection.sendall(b"+PONG\r\n")
                elif words[0] in (b"EVALSHA", b"EVAL", b"SCRIPT") and self.hang.is_set():
                    continue  # no answer, ever
                else:
                    connection.sendall(b"+OK\r\n")
        except (OSError, ValueError):
            return
        finally:
            connection.close()

    def close(self) -> None:
        # Closing alone wakes neither a thread in accept() nor one reading a connection the
        # client keeps open (Linux): shut them down first, or they outlive the test.
        for open_socket in [self.listener, *self.connections]:
            try:
                open_socket.shutdown(socket.SHUT_RDWR)
            except OSError:  # the client closed it already
                pass
        self.listener.close()
        for thread in self.threads:
            thread.join(timeout=5)


@pytest.fixture
def hanging_redis():
    redis = HangingRedis()
    yield redis
    redis.close()


def test_a_start_waiting_on_a_hanging_redis_does_not_hold_up_the_writers_batches(study_folder, monkeypatch, hanging_redis):
    pytest.importorskip("redis")
    monkeypatch.setenv("STUDY_REDIS_URL", hanging_redis.url)
    app = create_app(config.load(study_folder), suggestion_engine=object())
    client = app.test_client()
    session_id = start(client, access_code="writing-1")  # over loopback: not counted
    to_writing(client, session_id)
    post_init(client, session_id)

    hanging_redis.hang.set()
    answers = []
    newcomer = threading.Thread(target=lambda: answers.append(app.test_client().get(
        "/task", query_string={"access_code": "newcomer"}, environ_base=ELSEWHERE).status_code))
    newcomer.start()
    time.sleep(0.3)  # the newcomer's start is waiting on Redis
    began = time.monotonic()
    event = {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
             "textDelta": "", "currentDoc": "Prompt.\n", "currentCursor": 7}
    batch = client.post(f"/api/sessions/{session_id}/events", json={"events": [event]})
    waited = time.monotonic() - began
    newcomer.join()

    assert answers == [503]  # the newcomer is told to come back: the limit cannot be counted
    assert batch.status_code == 200
    assert waited < 1.0, f"the writer's batch waited {waited:.2f} s for the newcomer's Redis count"
