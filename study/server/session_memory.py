"""What a server process remembers of the sessions it has served lately, for the event API's
hot path: the text after a session's last checked batch (study.server.arrival) and the
sessions known to be writing (study.server.events_api). Each use confirms what it remembers
against the database before relying on it, since another worker process may have moved a
session on; the memory only saves reading it again."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class SessionMemory:
    """A thread-safe map of session id to a value, keeping the `size` used last."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str, default: Any = None) -> Any:
        with self._lock:
            if session_id not in self._values:
                return default
            self._values.move_to_end(session_id)  # used last: kept longest
            return self._values[session_id]

    def remember(self, session_id: str, value: Any) -> None:
        with self._lock:
            self._values[session_id] = value
            self._values.move_to_end(session_id)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._values.pop(session_id, None)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
