"""The gunicorn configuration the project ships for the task server (study.server.wsgi), given
to gunicorn as a module:

    STUDY_DIR=path/to/study gunicorn -c python:study.server.gunicorn_config -w 4 'study.server.wsgi:app'

Its one hook has each worker hold study.db open from its start, as `study serve`'s granian
workers do (study.server.serving): gunicorn's workers otherwise open the database at their first
request, so `study copy-database`, which must have study.db to itself
(study.store.copy_database), would go ahead under an idle gunicorn, and the first writer to
arrive after the copy would be stored in study.db and never reach PostgreSQL. Command-line
options (-w, --threads, -b ...) still apply beside it.
"""

from __future__ import annotations

from study.store.engine import hold_open


def post_worker_init(worker) -> None:
    """Called by gunicorn in each worker once it has loaded the app, before its first request:
    after the fork (with or without --preload), where a connection may be opened."""
    hold_open(worker.wsgi.extensions["study.engine"])
