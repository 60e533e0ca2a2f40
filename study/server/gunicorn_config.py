"""The gunicorn configuration the project ships for the task server (study.server.wsgi), given
to gunicorn as a module:

    STUDY_DIR=path/to/study gunicorn -c python:study.server.gunicorn_config -w 4 'study.server.wsgi:app'

It is no longer needed: study.server.wsgi has each worker hold study.db open and settle the model
calls of killed workers as it starts, with or without it and with or without --preload
(study.server.worker_start). Its one hook does the same once more after gunicorn has loaded the
app in the worker, which finds the database held and nothing left to settle, so the commands
written with it keep working. Command-line options (-w, --threads, -b ...) still apply beside it.
"""

from __future__ import annotations

from study.server import worker_start


def post_worker_init(worker) -> None:
    """Called by gunicorn in each worker once it has loaded the app, before its first request:
    after the fork (with or without --preload), where a connection may be opened."""
    worker_start.start_worker(worker.wsgi)
