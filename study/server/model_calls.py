"""The guards around every model call a participant's request makes (issue 10; README,
"Suggestions"): Tab suggestions (suggestions_api), proactive ghost text (proactive_api) and the
chat assistant's replies (chat_api) all go through here, in this order:

1. `slot()`: at most `[suggestions] concurrent_requests` model calls are in flight in this
   server process; past it the request is answered 503 at once, without touching the database,
   so slow model calls cannot take every thread from event ingest and pages (`slot_if_free()`
   for a view that stores something of its own either way).
2. `admit()`: in one transaction (or in the caller's: `admission()`), the per-session limit
   (`max_requests_per_minute`), the study-wide one (`model_calls_per_minute`) and the
   study-wide slots (`concurrent_requests` calls without an outcome yet) are counted and the
   request is recorded in suggestion_requests *before* the model is called: concurrent
   requests see each other's rows, so the limits hold under a burst, and they are counted where
   every worker process and host sees them, so each is one limit for the whole study
   (study.server.limit_store).
3. `settle()`: the row gets the outcome and the model that answered (the endpoint's reply names
   it; the configured name stays in `parameters`).
4. `unavailable()`: a failure reaches the participant as one calm sentence; the reason, which can
   name the endpoint's address and HTTP status, goes to the server log and the row, which
   `study status` summarises.

A worker killed mid-call (kill -9, the out-of-memory killer) leaves its calls' rows without an
outcome, holding slots. Each row names its process (study.server.serving_process), and a process
of the same host that starts, or that finds every slot taken, settles the rows of this host's
processes that no longer run (`settle_stopped_calls`): their slots are free at once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from flask import current_app, g, jsonify
from sqlalchemy import Engine, select, update

from study import model_client
from study.config import Condition
from study.server import serving_process
from study.server.context import WRITING_SESSIONS, engine, limits, study
from study.store import group_commit, provenance, reading, writing
from study.store.coordination import clock
from study.store.db import suggestion_requests
from study.store import sessions as session_store
from study.suggest import postprocess

# What a participant reads when the model fails: nothing about endpoints or status codes.
UNAVAILABLE = "suggestions are not available right now"
BUSY = "suggestions are busy right now; try again in a moment"
MOVED = "this session is no longer at the writing stage"
# Written before the model is called, replaced by the outcome; left only if the server stopped.
NO_OUTCOME = "no outcome recorded: the server stopped while the model was being asked"
# What such a row says once a process of its host has seen that the process which made the call
# no longer runs (`settle_stopped_calls`).
SERVER_STOPPED = "no outcome: the server process that asked the model stopped (killed or crashed) before the answer"
# PostgreSQL: one advisory lock that requests take in turn to count and record, so the
# study-wide count cannot be read by two requests at once (SQLite's write lock does this).
_COUNTING_LOCK = 0x5714D7_CA11
# PostgreSQL: the admission's COMMIT returns once the row is visible to every other
# transaction, without waiting for its WAL to reach the disk (synchronous_commit off for this
# transaction alone). The row only counts a call for the limits; what must outlive a crash is
# the outcome, and `settle` commits that with a flush, which writes the WAL in order and so
# takes the admission's row with it. A database that crashes before that flush loses the row
# and the count of one call; `settle` then finds no row and the participant gets no
# suggestion that has no record (ModelCallLost). At 1,000 writers the admission's wait fell from
# 3.3 ms to 1.9 at the median (docs/benchmarks.md).
_COMMIT_WITHOUT_FLUSH = ("SELECT set_config('synchronous_commit', 'off', true)", ())

logger = logging.getLogger(__name__)

# The per-session, study-wide and in-flight counts (`admit`), and the row a call starts as.
_COUNTS_SINCE = """
    SELECT
      (SELECT count(*) FROM suggestion_requests WHERE session_id = ? AND created_at > {minute_ago}) AS recent,
      (SELECT count(*) FROM suggestion_requests WHERE created_at > {minute_ago}) AS everyone,
      (SELECT count(*) FROM suggestion_requests WHERE error = ? AND created_at > {stale}) AS in_flight
"""
_COUNTS = _COUNTS_SINCE.format(minute_ago="?", stale="?")
_RECORD = """
    INSERT INTO suggestion_requests
      (session_id, created_at, condition, model, parameters, raw, suggestions, error, server_host, server_process)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
"""


# Whether the session is at the stage and in the condition its request was served for (1 or 0).
_AT = session_store.AT_STAGE
# PostgreSQL: the counts, the session's check and, when they leave room, the row, in one
# statement (its snapshot is taken after the counting lock is held, in the statement before it).
# Timed by the database server's clock, which every host shares: a host whose own clock was
# minutes behind recorded calls that the others' last minute never counted, and counted none of
# theirs in flight (study.store.coordination.clock).
_CLOCK = "SELECT extract(epoch FROM clock_timestamp())::float8 AS now"
_COUNT_AND_RECORD = f"""
    WITH clock AS ({_CLOCK}),
    counts AS ({_COUNTS_SINCE.format(minute_ago="(SELECT now FROM clock) - 60", stale="(SELECT now FROM clock) - ?")}),
    at AS ({_AT}),
    recorded AS (
      INSERT INTO suggestion_requests
        (session_id, created_at, condition, model, parameters, raw, suggestions, error, server_host, server_process)
      SELECT ?, clock.now, ?, ?, ?, ?, ?, ?, ?, ? FROM clock, counts, at
      WHERE counts.recent < ? AND counts.everyone < ? AND counts.in_flight < ? AND at.count >= ?
      RETURNING id
    )
    SELECT recent, everyone, in_flight, at.count, (SELECT id FROM recorded) FROM counts, at
"""

# The outcome, answering with the row's id when it found the row (`settle`: ModelCallLost).
_SETTLE = """
    UPDATE suggestion_requests
    SET model = ?, parameters = ?, raw = ?, suggestions = ?, latency_ms = ?, error = ?
    WHERE id = ? RETURNING id
"""


class ModelCallLost(RuntimeError):
    """The model call's row was gone when its outcome came: the database lost it (a crash
    between the admission and the outcome, `_COMMIT_WITHOUT_FLUSH`). The participant gets an
    error rather than a suggestion the study has no record of."""


class Refused(Exception):
    """The request does not reach the model; `response()` is what the participant gets."""

    def __init__(self, message: str, status: int, busy: bool = False) -> None:
        # All in args, so it pickles whole (tests/test_exceptions). `busy`: refused for the
        # study's capacity rather than this participant's own pace (counted by `study status`).
        super().__init__(message, status, busy)
        self.message, self.status, self.busy = message, status, busy

    def __str__(self) -> str:
        return self.message

    def response(self):
        return jsonify(error=self.message), self.status


def _slots() -> threading.BoundedSemaphore:
    return current_app.extensions["study.suggestion_slots"]


@contextmanager
def slot(busy: str = BUSY) -> Iterator[None]:
    """Hold one of the process's model-call slots, or raise Refused (503) at once."""
    with slot_if_free() as held:
        counted(held, busy)
        yield


def counted(held: bool, busy: str = BUSY) -> None:
    """Count this request as a model call for `study status` (study.server.activity); Refused
    (503) when it `held` no slot."""
    g.study_model_call = True
    if not held:
        g.study_model_call_busy = True
        raise Refused(busy, 503)


@contextmanager
def slot_if_free() -> Iterator[bool]:
    """One of the process's model-call slots when one is free (True), else False at once, for
    a view that stores something of its own whether or not the model is asked (a chat arm's
    message is kept when the model is busy). The view calls `counted` once it knows the request
    needs the model."""
    held = _slots().acquire(blocking=False)
    try:
        yield held
    finally:
        if held:
            _slots().release()


def in_flight_seconds(study_config) -> float:
    """How long a model call's row without an outcome counts as in flight: the longest a model
    call can take (its timeout, and a chat reply's retry) with room to spare."""
    return 2 * study_config.suggestions.timeout_seconds + 10


def page_wait_ms(study_config) -> int:
    """How long a participant's page waits for its suggestion or ghost text before it says so:
    the model's time limit ([suggestions] timeout_seconds) and 5 s for the server's own work,
    and never less than the 20 s the pages waited before the limit was theirs to follow."""
    return max(20_000, round(study_config.suggestions.timeout_seconds * 1000) + 5_000)


def _in_flight_seconds() -> float:
    return in_flight_seconds(study())


def admit(session_id: str, condition: Condition, busy: str = BUSY, *, confirm_writing: bool = False) -> int:
    """Check the limits and record the request, in one transaction; its suggestion_requests
    row id. Raises Refused when a limit is reached (429) or every slot is taken (503): nothing
    is recorded then. The transaction goes ahead of the event batches waiting in this process
    (study.store.group_commit, `ahead`): the participant waits on it, a batch's browser does not.
    `confirm_writing`: the session must still be at the writing stage in `condition` (the view
    may have it from memory, context.writing_session_or_409), else Refused (409) and forgotten."""
    work = admission(session_id, condition, busy, confirm_writing=confirm_writing)
    outcome = group_commit.run_staged(engine(), work, key=None, ahead=True)
    if _slots_freed(outcome):  # counted again without the calls of processes that stopped
        work = admission(session_id, condition, busy, confirm_writing=confirm_writing)
        outcome = group_commit.run_staged(engine(), work, key=None, ahead=True)
    return admitted(session_id, outcome)


def admission(session_id: str, condition: Condition, busy: str = BUSY, *, confirm_writing: bool = False):
    """`admit`'s work, for a staged work of the caller's to run with `yield from
    work(connection, along)` (study.store.group_commit): `along` are statements of the caller's
    sent in the admission's first stage, ahead of its own, in its transaction (a chat arm's
    message: one round trip and one COMMIT fewer on PostgreSQL, study.paradigms.chat.arm_api).
    It returns the row id or the Refused to hand to `admitted`, and is the caller's last stage.
    The limits are read here, on the request's thread; the work may run on another."""
    per_session = study().suggestions.max_requests_per_minute
    study_wide = limits().model_calls_per_minute
    concurrent = limits().concurrent_suggestions
    in_flight_seconds = _in_flight_seconds()
    made_by = serving_process.this_process()
    server = (made_by.host, made_by.process) if made_by else (None, None)

    def count_and_record(connection, along: group_commit.Statements = ()):
        # Runs on whichever request thread leads the group: no Flask globals in here. Three
        # index range counts in one statement: every model call of a launch asks them while the
        # write turn is held. On PostgreSQL one round trip: BEGIN, the lock, the counts with the
        # row when they leave room, and COMMIT; without a flush unless `along` writes something
        # that must outlive a crash (_COMMIT_WITHOUT_FLUSH), in which case the counting lock is
        # held until the flush is done (a chat message's: about 50 a second at 1,000 writers).
        at = (session_id, "writing", condition.name)
        needed = 1 if confirm_writing else 0
        call = (condition.name, condition.model, "{}", "[]", "[]", NO_OUTCOME, *server)
        if connection.dialect.name == "postgresql":  # timed by the database's clock (_CLOCK)
            counts = (session_id, NO_OUTCOME, in_flight_seconds)
            rows = yield group_commit.Last([
                *(along or [_COMMIT_WITHOUT_FLUSH]),
                ("SELECT pg_advisory_xact_lock(?)", (_COUNTING_LOCK,)),
                (_COUNT_AND_RECORD, (*counts, *at, session_id, *call, per_session, study_wide, concurrent, needed)),
            ])  # fmt: skip
            ((recent, everyone, in_flight, found, recorded),) = rows[-1]
        else:
            now = time.time()
            counts = (session_id, now - 60, now - 60, NO_OUTCOME, now - in_flight_seconds)
            *_, ((recent, everyone, in_flight),), ((found,),) = yield [*along, (_COUNTS, counts), (_AT, at)]
            recorded = None
            row = (session_id, now, *call)
        if found < needed:
            return Refused(MOVED, 409)
        if recent >= per_session:
            return Refused(f"too many requests: at most {per_session} per minute; wait a moment", 429)
        if everyone >= study_wide:
            logger.warning("model calls: the study-wide limit of %d per minute is reached", study_wide)
            return Refused(busy, 429, busy=True)
        # A row without an outcome is a call in flight, on this process or another; one left by
        # a server that stopped mid-call stops counting once no call could still be running, or
        # at once when a process of its host settles it (`settle_stopped_calls`): another host's
        # processes cannot be seen from here, so its rows wait out the window.
        if in_flight >= concurrent:
            return Refused(busy, 503, busy=True)
        if recorded is not None:
            return recorded
        ((record,),) = yield group_commit.Last([(_RECORD, row)])
        return record[0]

    return count_and_record


def admitted(session_id: str, outcome: int | Refused) -> int:
    """The row id an admission's work returned, or its Refused raised (and the session
    forgotten by this worker when it has moved on from writing)."""
    if isinstance(outcome, Refused):
        if outcome.message == MOVED:
            WRITING_SESSIONS.forget(session_id)
        if outcome.busy:
            g.study_model_call_busy = True
            _slots_freed(outcome)  # for the next request (a chat arm's admission does not retry)
        raise outcome
    return outcome


# When this process last looked for calls of stopped processes in each study database, having
# found every slot taken: at most once a second, so a busy launch's refusals do not each cost a read.
_LOOK_EVERY_SECONDS = 1.0
_last_look: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()
_look_lock = threading.Lock()


def _slots_freed(outcome: int | Refused) -> bool:
    """Whether `outcome` is a refusal for want of a slot and settling the calls of this host's
    stopped processes freed any."""
    if not (isinstance(outcome, Refused) and outcome.busy and outcome.status == 503):
        return False
    database = engine()
    with _look_lock:
        now, last = time.monotonic(), _last_look.get(database)
        if last is not None and now - last < _LOOK_EVERY_SECONDS:
            return False
        _last_look[database] = now
    return settle_stopped_calls(database, study()) > 0


def settle_stopped_calls(engine: Engine, study_config) -> int:
    """Give every call without an outcome that a process of this host made, and that process no
    longer runs (killed mid-call), the outcome SERVER_STOPPED, freeing its slot; how many. `study
    serve`'s workers call it as they start (a worker the master starts again after a kill), the
    app as it is built, and a request that finds every slot taken. Rows of other hosts, and rows
    that name no process (/proc missing, or made before rows named one), keep the time window;
    rows past it hold no slot and keep NO_OUTCOME."""
    here = serving_process.this_host()
    if here is None:
        return 0
    calls = suggestion_requests.c
    with reading(engine) as connection:
        # Only rows still counted in flight hold a slot: older ones say NO_OUTCOME already, and
        # the window's index keeps this read small on the busy path of a long study's table.
        since = clock(connection) - in_flight_seconds(study_config)
        without_outcome = (calls.error == NO_OUTCOME) & (calls.server_host == here) & (calls.created_at > since)
        named = connection.execute(select(calls.server_process).distinct().where(without_outcome)).scalars().all()
    stopped = sorted(process for process in named if process and not serving_process.running(process))
    if not stopped:
        return 0
    with writing(engine) as connection:
        statement = update(suggestion_requests).where(without_outcome & calls.server_process.in_(stopped))
        settled = connection.execute(statement.values(error=SERVER_STOPPED)).rowcount
    if settled:
        logger.warning("model calls: %d left without an outcome by stopped server processes (%s) are settled; "
                       "their slots are free", settled, ", ".join(stopped))  # fmt: skip
    return settled


def settle(
    request_id: int,
    condition: Condition,
    *,
    answered_model: str | None,
    parameters: dict,
    raw: list,
    suggestions: list,
    latency_ms: float,
    error: str | None,
) -> None:
    """Replace the row's "no outcome" with the outcome, in a transaction of its own. To commit it
    together with what the caller stores from the answer, send `settling(...)` in that
    transaction instead. One statement on the driver: SQLAlchemy's statement machinery cost a
    fifth of a Tab request's CPU."""
    statement = settling(
        request_id, condition, answered_model=answered_model, parameters=parameters, raw=raw,
        suggestions=suggestions, latency_ms=latency_ms, error=error,
    )  # fmt: skip

    def write(_connection):
        (settled,) = yield group_commit.Last([statement])
        return bool(settled)

    # The row is this call's alone; the participant waits for it, so it goes ahead of the batches.
    if not group_commit.run_staged(engine(), write, key=f"suggestion_requests {request_id}", ahead=True):
        raise ModelCallLost(f"model call {request_id} has no row in suggestion_requests to settle")


def settling(
    request_id: int, condition: Condition, *, answered_model: str | None, parameters: dict, raw: list,
    suggestions: list, latency_ms: float, error: str | None,
) -> tuple[str, tuple]:
    """The statement that settles a model call's row (`settle`), for a staged work's stage
    (study.store.group_commit) or study.store.driver.driver_fetch."""
    values = (
        # The model that answered, as the endpoint's reply names it (UNNAMED when it named
        # none); the one asked for when nothing answered (parameters keep the configured name
        # either way, and a failed call answered nothing: study.store.provenance).
        answered_model or (condition.model if error else provenance.UNNAMED),
        json.dumps(parameters), json.dumps(raw), json.dumps(suggestions), latency_ms, error, request_id,
    )  # fmt: skip
    return _SETTLE, values


def unavailable(what: str, session_id: str, reason: str, timed_out: bool, calm: str = UNAVAILABLE):
    """The participant's answer to a failed model call; the reason goes to the log only."""
    logger.warning("%s for session %s failed: %s", what, session_id, reason)
    return jsonify(error=calm), 504 if timed_out else 502


def warm_up(study_config) -> None:
    """Build now what a server process's first model call would build while holding the GIL:
    the endpoint's client (its TLS context, the SDK's lazy imports) and the sentence splitter's
    compiled rules. `study serve` calls it in the master before forking its workers, so each
    inherits them. Cold, a worker's first Tab suggestion took 188 ms of CPU (4 ms warm); at a
    1,000-writer launch both workers' first suggestions held every writer's event batches up
    for a second (docs/benchmarks.md)."""
    settings = study_config.suggestions
    model_client.participant_client(settings)
    sample = [{"text": " She walked home. The night was quiet.", "token_logprobs": [-0.5, -0.25]}]
    postprocess.postprocess(sample, (), settings.blocklist)
