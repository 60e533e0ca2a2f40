"""Jobs that fail in every way a worker can, for tests/curation/test_runner.py.

Run as `python -m tests.curation.crashing_jobs KIND` (in a subprocess, under a timeout, so a
runner that hangs fails the test instead of hanging it): runs `study.curation.runner.run` over
items 0..11 on two workers, item 5 failing as KIND says, and prints the outcomes as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from study.curation.runner import run

CULPRIT = 5


class OldStyleError(ValueError):
    """Like DeltaError before the fix: pickles, but cannot be unpickled (its __init__ needs
    two arguments and gets the one formatted message)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field} {message}")


class LockedError(Exception):
    """An exception that cannot even be pickled: it holds a lock."""

    def __init__(self) -> None:
        super().__init__("holds a lock")
        self.lock = threading.Lock()


def job(item: tuple[int, str]) -> object:
    number, kind = item
    if number != CULPRIT:
        return number * number
    if kind == "exit":
        os._exit(3)  # a hard crash: no exception, no result
    if kind == "raise-unpicklable":
        raise LockedError()
    if kind == "raise-old-style":
        raise OldStyleError("textDelta.ops[1].retain", "runs past the end")
    if kind == "return-unreadable":
        return OldStyleError("x", "y")  # pickles in the worker, fails to unpickle in the parent
    if kind == "return-unpicklable":
        return threading.Lock()
    raise AssertionError(kind)


def main(kind: str) -> None:
    items = [(number, kind) for number in range(12)]
    outcomes = list(
        run(job, items, processes=2, progress=False, failed=lambda item, why: ["failed", why])
    )
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main(sys.argv[1])
