"""The gunicorn configuration the project ships for the task server (study.server.wsgi), given
to gunicorn as a module:

    STUDY_DIR=path/to/study gunicorn -c python:study.server.gunicorn_config -w 4 'study.server.wsgi:app'

Its one hook runs in each worker as it starts, as `study serve`'s granian workers do at theirs
(study.server.serving):
- the worker holds study.db open from its start: gunicorn's workers otherwise open the database
  at their first request, so `study copy-database`, which must have study.db to itself
  (study.store.copy_database), would go ahead under an idle gunicorn, and the first writer to
  arrive after the copy would be stored in study.db and never reach PostgreSQL;
- the model calls a killed worker had in flight are settled (gunicorn starts a worker again when
  one dies; with --preload the app is not built again, so create_app's own look does not run),
  freeing their slots now rather than after their time window (study.server.model_calls).
Command-line options (-w, --threads, -b ...) still apply beside it.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from study.server import model_calls
from study.store.transactions import hold_open

logger = logging.getLogger(__name__)


def post_worker_init(worker) -> None:
    """Called by gunicorn in each worker once it has loaded the app, before its first request:
    after the fork (with or without --preload), where a connection may be opened."""
    app = worker.wsgi
    hold_open(app.extensions["study.engine"])
    try:
        model_calls.settle_stopped_calls(app.extensions["study.engine"], app.extensions["study"])
    except SQLAlchemyError as error:  # the next request that finds every slot taken tries again
        logger.warning("model calls of stopped server processes could not be settled: %s", error)
