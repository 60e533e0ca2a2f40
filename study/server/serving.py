"""`study serve`: the task server on every core, as gunicorn worker processes with threads.

One Python process runs Python on one core at a time (the GIL), and waitress is one process: past
about 250 event requests a second it saturates a core and a 1,000-writer launch queues. So `study
serve` starts gunicorn's master with one worker process per core (`--workers`), each a threaded
("gthread") worker: a thread pool serves requests while the open connections wait in a poller, so
every writer's browser keeps its connection open between batches (`--writers` of them per worker,
no lower limit) without holding a thread.

The workers share everything that matters through the database (sessions, events, model calls,
limits; study.server.limit_store) and, with SQLite, take the write lock in turn without sleeping
(study.store.db). The app is built once in the master (so a bad study.toml fails before any
fork, and the tables are created once) and the workers inherit it with an empty connection pool.

A worker dies with its master (Linux's parent-death signal): a master killed with SIGKILL leaves
no worker behind still holding the port or answering requests, which is what a crash is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

from gunicorn.app.base import BaseApplication

from study.server import proxy

# A browser sends a batch at most every second or so while its writer types and is idle for
# minutes while they think; 75 s (nginx's default) keeps those connections open, where gunicorn's
# default of 2 s would make most batches open a new connection.
KEEPALIVE_SECONDS = 75
DEFAULT_WRITERS = 1000
_PR_SET_PDEATHSIG = 1


def default_workers() -> int:
    """One per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _die_with_master(_server, _worker) -> None:
    # Called in each worker right after the fork. Without it, a worker outlives a master killed
    # with SIGKILL for up to a second, still accepting requests on the inherited socket.
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the master died between the fork and the prctl
        os._exit(1)


class _Gunicorn(BaseApplication):
    def __init__(self, app, options: dict) -> None:
        self.application = app
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.application


def gunicorn_options(host: str, port: int, workers: int, threads: int, writers: int, proxies: int = 0) -> dict:
    return {
        # STUDY_TRUSTED_PROXIES (study.server.proxy): which peers may set the scheme.
        **proxy.gunicorn_options(proxies),
        "bind": [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"],
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        # Open connections per worker: each writer holds one, and the kernel may hand them all to
        # one worker, so every worker takes as many as the study is configured for.
        "worker_connections": writers,
        # The kernel's queue of connections not yet accepted: a launch's writers arrive together.
        "backlog": max(2048, writers),
        "keepalive": KEEPALIVE_SECONDS,
        "post_fork": _die_with_master,
        "proc_name": "study serve",
        "accesslog": None,
        "errorlog": "-",
        "loglevel": "warning",
        # A model call holds a thread for up to the model's timeout; the heartbeat comes from
        # the worker's main loop, not from those threads, so this only catches a hung worker.
        "timeout": 120,
        "graceful_timeout": 10,
    }


def run(app, *, host: str, port: int, workers: int, threads: int, writers: int) -> None:
    """Serve `app` (built by create_app) until SIGINT/SIGTERM; gunicorn exits the process on error."""
    # The master forks the workers from here: pooled database connections (an SQLite handle, a
    # PostgreSQL socket) must not be shared by several processes, so each worker opens its own.
    app.extensions["study.engine"].dispose()
    proxies = app.config.get("STUDY_TRUSTED_PROXIES", 0)
    _Gunicorn(app, gunicorn_options(host, port, workers, threads, writers, proxies)).run()
