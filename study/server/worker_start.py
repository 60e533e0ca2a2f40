"""What a task-server worker process does as it starts, before its first request, under every
server that forks its workers from a master: `study serve`'s granian workers
(study.server.serving), and gunicorn's (study.server.wsgi, which runs it after each fork, and the
shipped config's hook, study.server.gunicorn_config):
- it holds study.db open from its start: a worker otherwise opens the database at its first
  request, so `study copy-database`, which must have study.db to itself
  (study.store.copy_database), would go ahead under an idle server, and the first writer to
  arrive after the copy would be stored in study.db and never reach PostgreSQL;
- it settles the model calls a killed worker left in flight (the master starts a worker again
  when one dies, without building the app again), freeing their slots now rather than after
  their time window (study.server.model_calls); so does the app as it is built
  (`settle_calls_left`).
Both may run twice in one worker (gunicorn with the shipped config): the second finds the
database held already and nothing left to settle.
"""

from __future__ import annotations

import logging

from flask import Flask
from sqlalchemy.exc import SQLAlchemyError

from study.server import model_calls
from study.store.transactions import hold_open

logger = logging.getLogger(__name__)


def start_worker(app: Flask) -> None:
    """In a worker, after the fork (a connection must not cross one) and before its first
    request. A database that cannot be reached now is only warned of: the worker's requests
    meet it, and name it, as they come."""
    engine = app.extensions["study.engine"]
    try:
        hold_open(engine)
    except SQLAlchemyError as error:
        logger.warning("study.db could not be held open as this worker started (`study copy-database` will not "
                       "see it until its first request): %s", error)  # fmt: skip
    settle_calls_left(engine, app.extensions["study"])


def settle_calls_left(engine, study) -> None:
    """Settle the model calls stopped processes of this host left in flight, or warn: a database
    that does not answer right now (PostgreSQL restarting while a worker boots) must not stop
    the worker, since gunicorn's master halts the whole server when a worker fails to boot. The
    next request that finds every slot taken tries again (study.server.model_calls)."""
    try:
        model_calls.settle_stopped_calls(engine, study)
    except SQLAlchemyError as error:
        logger.warning("model calls of stopped server processes could not be settled: %s", error)
