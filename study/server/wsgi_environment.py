"""What the environment tells the task server under gunicorn (study.server.wsgi): the study
folder (STUDY_DIR), the shared secret (STUDY_SECRET_KEY) and each worker's request threads
(STUDY_THREADS). Kept apart from study.server.wsgi, which builds the app as it is imported, so
that the shipped config's hooks (study.server.gunicorn_config) can read them in gunicorn's
master without building one there.
"""

from __future__ import annotations

import os
from pathlib import Path

from study import config as study_config
from study.store.engine import DEFAULT_THREADS

STUDY_DIR_VARIABLE = "STUDY_DIR"
SECRET_KEY_VARIABLE = "STUDY_SECRET_KEY"
THREADS_VARIABLE = "STUDY_THREADS"


class WSGIConfigError(RuntimeError):
    """The environment does not say which study to serve, or the study does not load."""


def study_dir() -> Path:
    value = os.environ.get(STUDY_DIR_VARIABLE, "").strip()
    if not value:
        raise WSGIConfigError(
            f"the environment variable {STUDY_DIR_VARIABLE} is not set; set it to the study "
            f"folder that holds {study_config.CONFIG_NAME}, e.g. "
            f"{STUDY_DIR_VARIABLE}=my-study gunicorn -w 4 'study.server.wsgi:app'"
        )
    path = Path(value)
    if not path.is_dir():
        raise WSGIConfigError(
            f"{STUDY_DIR_VARIABLE}={value}: no such folder; point it at the study folder "
            f"that holds {study_config.CONFIG_NAME} (create one with `study init {value}`)"
        )
    return path


def request_threads() -> int:
    """The request threads of each worker (gunicorn's `--threads`), from STUDY_THREADS; 16 when
    it is not set, which the recipes' `--threads 8` and `--threads 16` stay within."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return DEFAULT_THREADS
    if not value.isdecimal() or int(value) < 1:  # isdigit passes "²", which int() refuses
        raise WSGIConfigError(
            f"{THREADS_VARIABLE}={value}: give the request threads of each worker as a whole "
            f"number from 1, the same as gunicorn's --threads (e.g. {THREADS_VARIABLE}=32 "
            f"gunicorn --threads 32 ...)"
        )
    return int(value)
