"""What this server process answered, counted for `study status` (study.store.activity).

An operator watching a launch of a thousand writers wants to see, for the whole study, how many
requests and events came in over the last minute, how long the event requests took in the
server, and how many model calls are in flight or refused as busy. Each process counts in
memory (a lock and a few integers per request) and writes one row per interval of
`STUDY_ACTIVITY_SECONDS` (default 10) to the study database, so the counts of every worker
process and host add up. The row is written after a response has been sent (its
`call_on_close`), so no writer's acknowledgement waits for it, or, when no request came after the
interval's end, by a timer the interval's first request armed: a process whose last writer has
stopped (a pilot's one writer, the end of a launch, a worker the others' traffic passed by) still
shows what it answered, where `study status` said "no requests recorded" while requests went
unwritten. An idle server writes nothing. Counting can never fail a request: a row that cannot
be written is logged and dropped.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from functools import partial

from flask import Flask, g, request
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from study.store import activity as activity_store
from study.store import group_commit, writing

INTERVAL_VARIABLE = "STUDY_ACTIVITY_SECONDS"
DEFAULT_INTERVAL_SECONDS = 10.0

logger = logging.getLogger(__name__)


class ActivityConfigError(ValueError):
    """STUDY_ACTIVITY_SECONDS is not a number of seconds; str() says what to give."""


def interval_seconds() -> float:
    value = os.environ.get(INTERVAL_VARIABLE, "").strip()
    if not value:
        return DEFAULT_INTERVAL_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    # At most a minute: `study status` sums the rows of the last minute, and a longer row would
    # hold counts from before it (or fall outside it whole).
    if not 0.1 <= seconds <= 60:
        raise ActivityConfigError(
            f"{INTERVAL_VARIABLE}={value!r}: give the seconds between two activity rows of a "
            f"server process, 0.1 to 60 (default {DEFAULT_INTERVAL_SECONDS:g}; `study status` shows "
            "the last minute), or leave it unset."
        )
    return seconds


class Recorder:
    """This process's counts since its last row."""

    def __init__(self, engine: Engine, seconds: float) -> None:
        self.engine = engine
        self.seconds = seconds
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.current: activity_store.Interval | None = None

    def _interval(self, now: float) -> activity_store.Interval:
        # A process forked after the app was built (gunicorn) starts counting afresh, as itself.
        if self.current is None or self.pid != os.getpid():
            self.pid = os.getpid()
            self.current = activity_store.Interval(f"{socket.gethostname()}:{self.pid}", started_at=now)
            # The timer holds the recorder weakly, and the engine's pool of the moment: an app
            # that is gone, or whose engine was disposed since (a server stopped, a test over),
            # writes nothing, rather than open a connection again to a database left behind.
            timer = threading.Timer(
                self.seconds, _store_when_due, args=(weakref.ref(self), self.current, self.engine.pool)
            )
            timer.daemon = True  # a process that exits leaves its last interval unwritten
            timer.start()
        return self.current

    def store_when_due(self, interval: activity_store.Interval) -> None:
        """The interval's end came with no request to write it: write it from here, unless a
        request past its end took it first."""
        with self.lock:
            if self.current is not interval:
                return
            self.current = None
        self.store(interval)

    def count(
        self, event_ms: float | None, model_call: bool, refused: bool
    ) -> activity_store.Interval | None:
        """Count one answered request; the finished interval to store, when one is due."""
        now = time.time()
        with self.lock:
            interval = self._interval(now)
            interval.requests += 1
            interval.ended_at = now  # the last request counted: an idle spell is not in it
            if event_ms is not None:
                interval.event_requests += 1
                interval.event_ms[activity_store.bucket(event_ms)] += 1
            interval.suggestion_requests += model_call
            interval.busy_refusals += refused
            if now - interval.started_at < self.seconds:
                return None
            self.current = None  # the next request starts the next interval, and arms its timer
            return interval

    def answered(self, response, event_ms: float | None, model_call: bool, refused: bool):
        """Count one answered request, and have `response` store the interval when one is
        due, once it is sent (the after-request hook's work)."""
        then = self.after_sending(event_ms, model_call, refused)
        if then is not None:
            response.call_on_close(then)
        return response

    def after_sending(self, event_ms: float | None, model_call: bool, refused: bool) -> Callable[[], None] | None:
        """Count one answered request; what to run once its answer is sent (the finished
        interval stored), when one is due. The event lane runs it from its own answer."""
        due = self.count(event_ms, model_call, refused)
        return None if due is None else partial(self.store, due)

    def store(self, interval: activity_store.Interval) -> None:
        interval.event_queue_max = group_commit.deepest_waiting(self.engine)
        try:
            with writing(self.engine) as connection:
                activity_store.record(connection, interval)
        except SQLAlchemyError as error:
            # Only counts for the operator's status line are lost; nothing of the study's data.
            logger.warning("could not record this server's activity for `study status`: %s", error)


def _store_when_due(recorder: weakref.ref, interval: activity_store.Interval, pool) -> None:
    alive = recorder()
    if alive is not None and alive.engine.pool is pool:  # dispose() gives the engine a new pool
        alive.store_when_due(interval)


def install(app: Flask, engine: Engine) -> None:
    """Count every request of `app` (registered before the other hooks, so its time includes
    theirs)."""
    recorder = Recorder(engine, interval_seconds())
    app.extensions["study.activity"] = recorder

    @app.before_request
    def started() -> None:
        g.study_started = time.perf_counter()

    @app.after_request
    def answered(response):
        started_at = g.get("study_started")
        event_ms = None
        if started_at is not None and request.method == "POST" and _is_event_request():
            event_ms = (time.perf_counter() - started_at) * 1000
        return recorder.answered(
            response, event_ms, g.get("study_model_call", False), g.get("study_model_call_busy", False)
        )


def _is_event_request() -> bool:
    # The editor's and the chat page's event batches (events_api, chat's page events).
    rule = request.url_rule
    return rule is not None and rule.rule.endswith("/events")
