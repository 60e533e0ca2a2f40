"""Injected failures, for testing the client's money guarantees ("never pay twice, reconcile
first").

A fault fails the next matching call(s): `before` fails it without doing anything; `after` does
the work, saves it, then loses the answer, which is the case a ledger must survive (did the pay go
through or not?). The answer is lost by closing the connection without a response (`status`
None), or replaced by an error status with Prolific's error body. Faults are set by the admin
endpoint /_emulator/faults or per request with the header `X-Emulator-Fault: after[; status=503]`;
they live in memory only, since they are part of the test, not of Prolific's state.

A fault with `hold` keeps the caller waiting instead of answering at once: the request stays
open (its work done, with `after`) until the test releases held answers (`DELETE
/_emulator/faults`), and only then is the answer lost. That is the moment a test kills a real
process in: it has sent the call and waits for an answer that has not come.
"""

from __future__ import annotations

import fnmatch
import threading
from dataclasses import asdict, dataclass

HEADER = "X-Emulator-Fault"
WHEN = ("before", "after")


@dataclass
class Fault:
    method: str  # "*" for any
    path: str  # a glob over the request path, e.g. "/api/v1/bulk-bonus-payments/*/pay/"
    when: str  # "before" | "after"
    times: int = 1
    status: int | None = None  # None: close the connection without an answer
    hold: bool = False  # wait until released before failing

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method.upper())
                and (fnmatch.fnmatchcase(path, self.path)
                     or fnmatch.fnmatchcase(path.rstrip("/") + "/", self.path)))


def parse(spec: dict) -> Fault:
    """A fault from the admin endpoint's JSON; ValueError with a reason if it is not one."""
    when = spec.get("when")
    if when not in WHEN:
        raise ValueError('"when" must be "before" or "after"')
    path = spec.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError('"path" must be a path (a glob) starting with /')
    times, status = spec.get("times", 1), spec.get("status")
    if not isinstance(times, int) or times < 1:
        raise ValueError('"times" must be a positive integer')
    if status is not None and (not isinstance(status, int) or not 400 <= status <= 599):
        raise ValueError('"status" must be null (drop the connection) or an HTTP error status')
    hold = spec.get("hold", False)
    if not isinstance(hold, bool):
        raise ValueError('"hold" must be true or false')
    return Fault(str(spec.get("method", "*")).upper(), path, when, times, status, hold)


def from_header(value: str) -> Fault | None:
    """`after`, `before`, `after; status=503` -> a one-off fault for this request."""
    parts = [p.strip() for p in value.split(";") if p.strip()]
    if not parts or parts[0] not in WHEN:
        return None
    status = None
    for part in parts[1:]:
        key, _, raw = part.partition("=")
        if key.strip() == "status" and raw.strip().isdigit():
            status = int(raw)
    return Fault("*", "*", parts[0], 1, status)


class Faults:
    """The pending faults; `take` consumes one use of the first that matches."""

    def __init__(self) -> None:
        self._pending: list[Fault] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._held = 0

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._pending.append(fault)

    def clear(self) -> None:
        """Forget pending faults and let every held answer go (lost, as the fault says)."""
        with self._lock:
            self._pending.clear()
            released, self._released = self._released, threading.Event()
        released.set()

    def hold(self) -> None:
        """Keep this request waiting until `clear`."""
        with self._lock:
            self._held += 1
            released = self._released
        released.wait()
        with self._lock:
            self._held -= 1

    def held(self) -> int:
        with self._lock:
            return self._held

    def listed(self) -> list[dict]:
        with self._lock:
            return [asdict(f) for f in self._pending]

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._pending:
                if fault.matches(method, path):
                    fault.times -= 1
                    if fault.times == 0:
                        self._pending.remove(fault)
                    return fault
        return None
