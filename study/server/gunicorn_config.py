"""The gunicorn configuration the project ships for the task server (study.server.wsgi), given
to gunicorn as a module:

    STUDY_DIR=path/to/study gunicorn -c python:study.server.gunicorn_config -w 4 'study.server.wsgi:app'

Its one hook runs in each worker as it starts what `study serve`'s granian workers run at theirs
(study.server.worker_start): the worker holds study.db open from its start, and settles the model
calls a killed worker left in flight (gunicorn starts a worker again when one dies; with
--preload the app is not built again, so create_app's own look does not run).
Command-line options (-w, --threads, -b ...) still apply beside it.
"""

from __future__ import annotations

from study.server import worker_start


def post_worker_init(worker) -> None:
    """Called by gunicorn in each worker once it has loaded the app, before its first request:
    after the fork (with or without --preload), where a connection may be opened."""
    worker_start.start_worker(worker.wsgi)
