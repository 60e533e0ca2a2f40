"""The task server as a WSGI module, for running it under gunicorn with several processes:

    export STUDY_DIR=path/to/study STUDY_SECRET_KEY=...
    gunicorn -w 4 'study.server.wsgi:app'

Each worker holds study.db open from its start, so that `study copy-database` sees an idle
server, and settles the model calls a killed worker left in flight (study.server.worker_start),
with or without --preload. The shipped config (`-c python:study.server.gunicorn_config`) does
the same once more, and, in gunicorn's master, warns when PostgreSQL's max_connections is short
for `-w` workers and gives each gunicorn a control socket of its own. A worker that boots while
PostgreSQL does not answer (gunicorn starts one again during a restart) waits for it, up to a
minute, rather than halting gunicorn (study.server.database_wait).

(`--threads 4` as well makes each worker a threaded one, which keeps the editors' connections
open between batches and goes on serving while a request waits for the database or the model;
scripts/bench_ingest.py measures both.) STUDY_THREADS tells the app gunicorn's `--threads` when
it is above 16: each worker's connection pool keeps a connection for every request thread, and a
thread past the pool's limit would wait for one, up to 30 s.

STUDY_DIR is the study folder (the one holding study.toml). Everything the workers share lives
in the database: sessions, events, the model-call limits and slots (counted from the
suggestion_requests table) and the new-session throttle per address (or in Redis with
STUDY_REDIS_URL; study.server.limit_store), so any worker can answer any request of any session
and every limit is one limit. What stays per process is harmless: the schema validator, the
suggestion engine and its HTTP client, and the cache of checked texts (study.server.arrival,
confirmed against the database before use). `study serve` runs this same app on granian
(study.server.serving).

STUDY_SECRET_KEY must be the same in every worker: without it each process draws its own
Flask SECRET_KEY. Nothing signs cookies today (the session id travels in the URL), so a missing
key only earns a warning, but anything that starts using Flask's `session` would break.

With SQLite, the workers share one study.db file; it is opened in WAL mode and every write
takes the write lock up front (study.store.transactions), so they queue rather than fail. Several hosts
need PostgreSQL (`database = "postgresql+psycopg://..."` in study.toml).
"""

from __future__ import annotations

import fcntl
import logging
import os
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from study import config as study_config
from study import config_texts
from study.server import create_app, stages, worker_start
from study.server.activity import ActivityConfigError
from study.server.database_trouble import unwritable_at_start
from study.server.database_wait import when_answering
from study.server.limit_store import LimitStoreUnavailable
from study.server.wsgi_environment import (
    SECRET_KEY_VARIABLE,
    STUDY_DIR_VARIABLE,
    WSGIConfigError,
    request_threads,
    study_dir,
)
from study.store import make_engine
from study.store.engine import unopened_message
from study.store.transactions import hold_open, keep_write_connection, let_go

logger = logging.getLogger(__name__)


@contextmanager
def _one_worker_at_a_time(directory: Path):
    # gunicorn starts its workers at the same moment and each one creates the tables if they
    # are missing; two concurrent CREATE TABLEs make one worker fail ("table already exists" on
    # SQLite, a unique violation in pg_type on PostgreSQL). The workers of one gunicorn run on
    # one host, so an advisory lock on study.toml (which every worker has just read) is enough
    # to take turns.
    with open(directory / study_config.CONFIG_NAME, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def load_app():
    directory = study_dir()
    try:
        study = study_config.load(directory)
    except study_config.ConfigError as error:
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {error}") from None
    unfinished = config_texts.unfinished_consent(study) or config_texts.demo_consent(study)
    if unfinished:
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {unfinished}")
    if not os.environ.get(SECRET_KEY_VARIABLE):
        logger.warning(
            "%s is not set: each worker process draws its own Flask SECRET_KEY. Set it to one "
            "random value for all workers, e.g. %s=$(python -c 'import secrets; "
            "print(secrets.token_hex(32))')",
            SECRET_KEY_VARIABLE,
            SECRET_KEY_VARIABLE,
        )
    threads = request_threads()
    if (unwritable := unwritable_at_start(study.database_url)) is not None:
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {unwritable}")
    try:
        # A worker gunicorn starts again during a PostgreSQL restart waits for it rather than
        # halting gunicorn (study.server.database_wait); outside the lock, so that the other
        # workers wait beside it, not after it.
        application, lost = when_answering(study.database_url, lambda: _built(study, directory, threads),
                                           f"gunicorn worker pid {os.getpid()}")  # fmt: skip
    except (LimitStoreUnavailable, ActivityConfigError, study_config.ConfigError) as error:
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {error}") from None
    except SQLAlchemyError as error:
        # As `study serve` says it (study.cli): the database and the fix, not a traceback.
        message = unopened_message(error)
        if message is None:
            raise
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {message}") from None
    if lost:
        raise WSGIConfigError(f"{STUDY_DIR_VARIABLE}={directory}: {lost}")
    # Under `gunicorn --preload` this module is imported in the master, which then forks the
    # workers: a pooled connection (an SQLite handle or a PostgreSQL socket) must not be
    # inherited by several processes. Emptying the pool here makes each worker open its own.
    application.extensions["study.engine"].dispose()
    # Each worker's engine lives as long as the worker (study.store.transactions.keep_write_connection).
    keep_write_connection(application.extensions["study.engine"])
    _start_in_every_worker(application)
    return application


def _built(study, directory: Path, threads: int):
    """The app, and why it cannot serve the sessions on their path (stages.lost_names), or None."""
    engine = make_engine(study.database_url, threads)
    try:
        with _one_worker_at_a_time(directory):
            application = create_app(study, engine=engine)
        return application, stages.lost_names(study, engine)
    except BaseException:
        engine.dispose()  # a try that failed: its connections, if any, are not the next one's
        raise


def _start_in_every_worker(application) -> None:
    """Have every process that serves the app hold study.db open and settle the model calls
    of killed workers from its start (study.server.worker_start), with or without gunicorn's
    --preload and without the shipped config (`gunicorn 'study.server.wsgi:app'`, as every
    gunicorn tutorial runs an app)."""
    engine = application.extensions["study.engine"]
    # Without --preload this runs in the worker itself (create_app has just settled): it holds
    # study.db from here. With --preload it runs in the master, which holds it until it forks.
    hold_open(engine)
    # Why fork hooks rather than a gunicorn hook: gunicorn's hooks come only from a config file
    # (-c), which a plain run has not, while every worker of a --preload master is its fork,
    # started again by a fork after a kill, where the app is not built again. The hooks let go
    # of the held connection around each fork (no SQLite connection may cross one: the child
    # would take the parent's locks for its own) and hold it again on both sides. A fork that
    # is not a worker (gunicorn's --daemon and USR2 re-exec, a subprocess with a preexec_fn)
    # does the same; both steps are harmless there, and undone by its exit or exec.
    os.register_at_fork(
        before=lambda: let_go(engine),
        after_in_parent=lambda: _hold_again(engine),
        after_in_child=lambda: _forked(application),
    )


def _hold_again(engine) -> None:
    try:
        hold_open(engine)
    except SQLAlchemyError as error:  # raised in a fork hook, it would only be printed
        logger.warning("study.db could not be held open again after a fork: %s", error)


def _forked(application) -> None:
    # SQLAlchemy's advice for a child: leave the parent's pooled connections to the parent
    # without closing them (close=False), and open its own.
    application.extensions["study.engine"].dispose(close=False)
    worker_start.start_worker(application)


app = load_app()
