"""Threads a test leaves running once it is over, in the pytest-xdist worker that runs the tests
after it.

A thread left there runs beside every later test of the worker: what it allocates lands in their
gc checks (tests/garbage.py: CI found 1,722 and 2,783 objects of another thread's garbage), its
CPU in their time. The scan that found them (after each test, the threads not alive before it)
found one kind in most files: study.server.activity's timer, which writes an interval's row 10 s
after the interval's first request. A test's app is gone when it ends, but not always collected
yet (a Flask app is a cycle), and then its timer wrote into that test's database through
SQLAlchemy while later tests ran. tests/conftest.py cancels those timers after each test
(`cancel_timers`) and, at the end of each worker, warns of the servers and threads of our own
still running (`still_running`): a warning, never a failure, since a thread ending a moment
after its test (a server's connection the client has not closed yet) is no fault.
"""

from __future__ import annotations

import threading
import time

# study.store.checkpoints: the process's one WAL checkpointer, started by the first write and
# kept for the life of the process (a server's), by design.
PROCESS_WIDE = frozenset({"study-wal-checkpoints"})


def _module(function: object) -> str:
    owner = getattr(function, "__self__", None)  # a bound method: its object's class
    if owner is not None:
        return type(owner).__module__
    return getattr(function, "__module__", None) or ""


def _ours(module: str) -> bool:
    return module.startswith(("study.", "tests."))


def cancel_timers(before: set[threading.Thread]) -> None:
    """Cancel the toolkit's timers armed since `before` was taken (threading.enumerate()), and
    wait for one that already fired to finish its write."""
    for thread in threading.enumerate():
        if thread in before or not isinstance(thread, threading.Timer):
            continue
        if _module(thread.function).startswith("study."):
            thread.cancel()
            thread.join(timeout=10)


def still_running(before: set[threading.Thread], grace: float = 2.0) -> list[str]:
    """The threads started since `before` and still running after `grace` seconds that serve HTTP
    (a stand-in server's serve_forever) or run a function of the toolkit or the tests, as
    "name (target)". (A server's shutdown() returns while its thread is still leaving.)"""
    left = []
    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread in before or thread.name in PROCESS_WIDE:
            continue
        target = getattr(thread, "_target", None) or getattr(thread, "function", None)
        name = getattr(target, "__qualname__", type(thread).__qualname__)
        if not (_ours(_module(target)) or name.endswith("serve_forever") or _ours(type(thread).__module__)):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(f"{thread.name} ({name})")
    return left
