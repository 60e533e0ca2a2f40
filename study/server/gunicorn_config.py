"""The gunicorn configuration the project ships for the task server (study.server.wsgi), given
to gunicorn as a module:

    STUDY_DIR=path/to/study gunicorn -c python:study.server.gunicorn_config -w 4 'study.server.wsgi:app'

study.server.wsgi has each worker hold study.db open and settle the model calls of killed
workers as it starts, with or without this config and with or without --preload
(study.server.worker_start); `post_worker_init` does the same once more, which finds the
database held and nothing left to settle. What only this config does, in gunicorn's master
(the arbiter), which alone knows `-w`:

- `when_ready` warns once, as `study serve` does, when PostgreSQL's max_connections is below
  what the workers' pools may open (study.store.engine.connections_short);
- `on_starting` gives each gunicorn a control socket of its own, named for its bind address
  (study.server.control_socket), where gunicorn 25.1+ would make every gunicorn of a machine
  share one and delete it for all when one stops.

Command-line options (-w, --threads, -b ...) still apply beside it.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

# gunicorn reads every name of this module that is one of its settings as that setting: no
# import here may be named like one (the module study.server.control_socket is).
from study import config as study_config
from study.server import wsgi_environment, worker_start
from study.server.control_socket import own as own_control_socket
from study.store import make_engine
from study.store.engine import connections_short

# gunicorn's worker classes that serve one request per thread, `--threads` of them (sync is one).
_THREADED = ("sync", "gthread")


def on_starting(server) -> None:
    """Called by gunicorn in the master before it starts anything: before its control socket."""
    own_control_socket(server.cfg, server.log)


def when_ready(server) -> None:
    """Called by gunicorn once, in the master, before it forks the first worker."""
    short = _connections_short(server.cfg)
    if short:
        server.log.warning(short)


def post_worker_init(worker) -> None:
    """Called by gunicorn in each worker once it has loaded the app, before its first request:
    after the fork (with or without --preload), where a connection may be opened."""
    worker_start.start_worker(worker.wsgi)


def _connections_short(cfg) -> str | None:
    """connections_short for gunicorn's workers, or None when it cannot tell: a study that does
    not load, or a database that does not answer, stops every worker with its own message and
    fix (study.server.wsgi), which this would only say first and worse."""
    try:
        study = study_config.load(wsgi_environment.study_dir())
        threads = wsgi_environment.request_threads()
    except (wsgi_environment.WSGIConfigError, study_config.ConfigError):
        return None
    if make_url(study.database_url).get_backend_name() != "postgresql":
        return None  # no engine for SQLite: making one would create study.db in the master
    # A worker's pool is sized for STUDY_THREADS, but a threaded worker holds no more connections
    # than it has threads: it opens no more than the smaller number of the two, and its spares.
    if cfg.worker_class_str in _THREADED:
        threads = min(threads, cfg.threads)
    engine = make_engine(study.database_url, threads)
    try:
        return connections_short(engine, cfg.workers, threads)
    except SQLAlchemyError:
        return None
    finally:
        engine.dispose()  # before the fork: no worker may inherit a connection
