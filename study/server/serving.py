"""`study serve`: the task server on every core, as granian worker processes with threads.

One Python process runs Python on one core at a time (the GIL), so `study serve` starts one worker
process per core (`--workers`). Each worker is granian's: its HTTP side (connections, keep-alive,
parsing requests and writing answers) runs in Rust outside the GIL, and the Flask app runs on a
pool of `--threads` Python threads, and one more for each model call the worker may hold
(`model_call_threads`). At a 1,000-writer launch the event API's budget is about 1 ms
of CPU per request (issue 17); a pure-Python server spends much of that on HTTP alone (at 1,000
writers gunicorn's threaded worker took 1.93 ms per event request where granian took 1.15 ms,
docs/benchmarks.md), so the HTTP side is left to code that does not hold the GIL. Every writer's
browser keeps its connection open between batches; `--writers` sets how many requests a worker
takes at once (the rest wait in the kernel's queue), never fewer than the threads.

Before forking, the master also builds what every worker would otherwise build at its first
model call, holding its GIL while the writers' event batches wait (study.server.model_calls
`warm_up`), and freezes what it built out of the garbage collector's sight (`gc.freeze`): a
worker's full collection then visits only what requests made, not the app's 230,000 objects
(115 ms with the GIL held, on this machine), and the pages stay shared with the master.

The workers share everything that matters through the database (sessions, events, model calls,
limits; study.server.limit_store) and, with SQLite, take the write lock in turn without sleeping
(study.store.write_turn). The app is built once in the master (so a bad study.toml fails before any
fork, and the tables are created once) and the forked workers inherit it with an empty
connection pool.

A worker dies with its master (Linux's parent-death signal): a master killed with SIGKILL leaves
no worker behind still holding the port or answering requests, which is what a crash is.

`gunicorn 'study.server.wsgi:app'` stays the way to run the same app under a server the
operator configures (the several-hosts recipe, README "Scale").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import multiprocessing
import os
import signal
import sys

from flask import Flask
from granian import Granian
from granian.constants import HTTPModes, Interfaces
from granian.http import HTTP1Settings
from granian.log import LogLevels

from study.server import model_calls, worker_start
from study.server.event_lane import EventLane
from study.server.limits import Limits
from study.store.transactions import keep_write_connection

DEFAULT_WRITERS = 1000
_PR_SET_PDEATHSIG = 1

# The app the master built, for the workers it forks (see `_app_in_worker`).
_app: Flask | None = None


def default_workers() -> int:
    """One per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def die_with_master() -> None:
    """In a worker, right after the fork: end this process when its parent ends. Without it, a
    worker outlives a master killed with SIGKILL, still accepting requests on the shared socket."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the master died between the fork and the prctl
        os._exit(1)


def _app_in_worker() -> Flask:
    # granian calls this in each worker to get the app; the fork carried the master's over.
    die_with_master()
    assert _app is not None, "serving.run sets the app before the workers start"
    keep_write_connection(_app.extensions["study.engine"])  # the worker's engine lives as long as it
    # Seen by `study copy-database` before its first writer; and granian starts a worker again
    # when one dies (kill -9, the out-of-memory killer): the calls the dead one had in flight
    # free their slots now rather than after their time window.
    worker_start.start_worker(_app)
    return _app


def model_call_threads(limits: Limits) -> int:
    """Threads a worker keeps for model calls beyond its `--threads`: the study's
    `[suggestions] concurrent_requests`, all of which may land on one worker. A suggestion, ghost
    text or chat reply holds its thread for the model's whole answer (hundreds of ms) while
    using no CPU; counted inside `--threads`, calls in flight took the threads event batches
    needed, which then waited in granian's queue (at 1,000 writers, ghost text's p99 55 ms
    against 10.5 ms with threads to spare; docs/benchmarks.md)."""
    return limits.concurrent_suggestions


# Files a worker holds beside its writers' connections: up to three for each database connection
# a thread may hold (SQLite: the database, its WAL and the WAL's index, `-shm`; PostgreSQL: one
# socket), and these for the rest (the listening socket, the model client's and the checkpoint
# thread's connections, logs, the runtime's own: 22 in an idle worker here).
_FILES_PER_THREAD = 3
_OTHER_FILES = 64


def files_short(writers: int, threads: int) -> str | None:
    """A warning for the operator when this host lets a worker open fewer files than `writers`
    connections and `threads` threads (model calls' included) need; None when it lets enough.
    granian raises its processes' own limit to the host's (the hard limit, `ulimit -Hn`); past
    it, a worker refuses new connections ("Too many open files") while participants wait."""
    try:
        import resource
    except ImportError:  # not Unix
        return None
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    beside = _FILES_PER_THREAD * threads + _OTHER_FILES
    needed = writers + beside
    if hard == resource.RLIM_INFINITY or hard >= needed:
        return None
    if beside >= hard:
        # The threads alone use up the limit: no number of writers would fit.
        return (
            f"Warning: this host lets a process open {hard} files (`ulimit -Hn`), and each worker needs {beside} "
            f"for its {threads} threads' database files before any of its {writers} connections; past {hard} it "
            f"refuses new ones. Fix: raise the limit (a systemd unit's LimitNOFILE={needed}; in a shell, as root, "
            f"`ulimit -n {needed}`), or pass fewer --threads (each may hold {_FILES_PER_THREAD} files)."
        )
    return (
        f"Warning: this host lets a process open {hard} files (`ulimit -Hn`), and each worker needs {needed} for "
        f"{writers} open connections; past {hard} it refuses new ones. Fix: raise the limit (a systemd unit's "
        f"LimitNOFILE={needed}; in a shell, as root, `ulimit -n {needed}`), or pass --writers "
        f"{max(1, hard - beside)} and serve the rest from more processes or hosts."
    )


# What the master holds for each worker it starts (granian's pipes to it), and what a worker holds
# in memory at a 1,000-writer launch (160-170 MB resident over 150 s, docs/benchmarks.md; 100 MB is
# what it shares least with the others).
_MASTER_FILES_PER_WORKER = 3
_WORKER_MEMORY_MB = 100


def workers_refused(workers: int) -> str | None:
    """Why this host cannot start `workers` worker processes, with the fix; None when it can.
    Checked before the master forks: past its limit of open files granian's master stops with
    "Too many open files" in a traceback, and past the host's memory the workers it started are
    killed one by one while participants wait."""
    try:
        import resource
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except ImportError:  # not Unix
        soft = resource = None
    most = default_workers()
    if soft is not None and soft != resource.RLIM_INFINITY:
        files = _MASTER_FILES_PER_WORKER * workers + _OTHER_FILES
        if files > soft:
            return (f"--workers {workers}: the master process would need {files} open files to start them, and "
                    f"this host lets it open {soft} (`ulimit -n`). Fix: pass fewer --workers (one per core, "
                    f"{most} here, is the default and uses every core).")
    available = _available_memory_mb()
    if available is not None and workers * _WORKER_MEMORY_MB > available:
        return (f"--workers {workers}: at a launch each worker process holds about {_WORKER_MEMORY_MB} MB, "
                f"{workers * _WORKER_MEMORY_MB:,} MB in all, and this host has {available:,} MB free. Fix: pass "
                f"at most --workers {max(1, available // _WORKER_MEMORY_MB)} (one per core, {most} here, is the "
                f"default and uses every core); serve more writers from more hosts (README \"Scale\").")
    return None


def _available_memory_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:  # not Linux
        return None
    return None


def granian_options(host: str, port: int, workers: int, threads: int, writers: int) -> dict:
    return {
        "address": host,
        "port": port,
        "interface": Interfaces.WSGI,
        "workers": workers,
        "blocking_threads": threads,
        # Requests a worker holds at once (running or waiting for a thread); a launch's writers
        # arrive together, and the kernel's queue holds the rest.
        "backpressure": max(writers, threads),
        "backlog": max(2048, writers),
        "http": HTTPModes.http1,
        # Behind a proxy (STUDY_TRUSTED_PROXIES), granian hands every X-Forwarded-* header on
        # and sets the scheme from the connection alone, so the app's ProxyFix decides with the
        # configured number of hops (study.server.proxy).
        "websockets": False,
        # Keep-alive: a browser posts a batch about once a second while its writer types.
        "http1_settings": HTTP1Settings(keep_alive=True),
        "log_level": LogLevels.warning,
        # A worker that dies (a crash in a C extension, the OOM killer) is started again.
        "respawn_failed_workers": True,
    }


class _ThreadsAreForWaiting(logging.Filter):
    # granian warns when a worker has more threads than about two per core. Ours mostly wait on
    # the model endpoint (a suggestion holds its thread for the model's whole answer), not on
    # the CPU, so the warning would only alarm the operator.
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Configuration allows spawning up to")


def run(app: Flask, *, host: str, port: int, workers: int, threads: int, writers: int) -> None:
    """Serve `app` (built by create_app) until SIGINT/SIGTERM."""
    global _app
    # The master forks the workers: pooled database connections (an SQLite handle, a PostgreSQL
    # socket) must not be shared by several processes, so each worker opens its own.
    app.extensions["study.engine"].dispose()
    model_calls.warm_up(app.extensions["study"])
    gc.collect()
    gc.freeze()
    _app = app
    if multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        raise RuntimeError("study serve forks its workers; multiprocessing's start method must be 'fork'")
    logging.getLogger("_granian").addFilter(_ThreadsAreForWaiting())
    if isinstance(app.wsgi_app, EventLane):
        app.wsgi_app.limit(threads)
    threads += model_call_threads(app.extensions["study.limits"])
    server = Granian("study.server.wsgi:app", **granian_options(host, port, workers, threads, writers))
    server.serve(target_loader=_app_in_worker, wrap_loader=False)
