"""How many new sessions one IP address may start per hour.

A bot that opens /task with made-up worker ids or access codes creates a session per request;
this bounds it without keeping any address: the counts live in this process's memory for an
hour and are gone on restart. Under gunicorn each worker process counts on its own, so the
effective limit is the setting times the number of workers (README, "Participants").
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque

WINDOW_SECONDS = 3600


class StartThrottle:
    def __init__(self, per_hour: int) -> None:
        self.per_hour = per_hour
        self._starts: defaultdict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def allow(self, address: str | None, now: float | None = None) -> bool:
        """Count one new session for `address`; False when it has used up its hour."""
        if self.per_hour <= 0:
            return True
        now = time.monotonic() if now is None else now
        with self._lock:
            starts = self._starts[address or "?"]
            while starts and starts[0] <= now - WINDOW_SECONDS:
                starts.popleft()
            if len(starts) >= self.per_hour:
                return False
            starts.append(now)
            if len(self._starts) > 100_000:  # forget idle addresses rather than grow forever
                for key in [k for k, v in self._starts.items() if not v]:
                    del self._starts[key]
            return True
