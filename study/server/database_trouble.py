"""The task server's answer while the study database takes no writes (its disk full, its file
system remounted read-only, as Linux does after a disk error, a disk failing), or, on
PostgreSQL, cannot be reached (restarted, stopped, the network between): 503 to the
participant, which the editor's outbox retries with every unacknowledged event kept
(study/static/editor-outbox.js), and, for the operator, one line naming the database and the fix
instead of a traceback per request. The driver's own words ("database or disk is full", "attempt
to write a readonly database") name neither the file nor the fix, and at a thousand writers a
traceback per event batch buries them: the line is logged at most once every LOG_EVERY_SECONDS
per process, with how many requests were refused since. Nothing here writes: once the disk takes
writes again, the next request is stored as any other (tests/server/test_database_trouble.py)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import threading
import time

from flask import Flask, jsonify, request
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from study.store.engine import shown_url, sqlite_file

LOG_EVERY_SECONDS = 10.0
# Below this much free space on a SQLite database's disk, `study status` warns.
LOW_DISK_BYTES = 100 * 2**20
# The editor's outbox shows its own "Reconnecting…" line; a page says it in words.
API_MESSAGE = (
    "the study cannot save anything right now; your work is kept, please try again in a few minutes"
)
PAGE_MESSAGE = "The study cannot save anything right now. Please try again in a few minutes."


# SQLite's primary result codes (the low byte of an extended one): the cause, and the fix for it.
_FREE = "free space on the disk holding {folder} (`df -h {folder}`)"
_WRITABLE = "make {folder} and the files in it writable again by the user running the server"
_SQLITE_CAUSES = {
    sqlite3.SQLITE_FULL: ("its disk is full", _FREE),
    sqlite3.SQLITE_READONLY: ("it has become read-only (its file system remounted read-only, "
                              "or its file or folder no longer writable by this user)", _WRITABLE),
    sqlite3.SQLITE_IOERR: ("the disk would not take a write (a full disk, a file size limit, "
                           "or a disk failing: see `dmesg`)", _FREE + ", or check the disk"),
    sqlite3.SQLITE_CANTOPEN: ("its file or folder can no longer be opened for writing", _WRITABLE),
}  # fmt: skip
_MEANWHILE = (
    "Nothing acknowledged is lost: the writers' editors say 'Reconnecting', keep what is not "
    "stored yet and send it again."
)
_AFTER = "the server stores again by itself once it can."
# PostgreSQL's SQLSTATEs for the same: disk_full, read_only_sql_transaction (a standby, or a
# cluster set read-only), io_error.
_POSTGRES_CAUSES = {
    "53100": "the disk of its data directory is full",
    "25006": "it takes no writes (a standby, or default_transaction_read_only)",
    "58030": "the disk of its data directory would not take a write (see its server log)",
}


def unwritable_message(error: BaseException, url: str | URL) -> str | None:
    """The operator's line for a write the study database refused for want of a writable
    disk, naming the database and the fix; None for any other error."""
    driver_error = getattr(error, "orig", None) or error
    path = sqlite_file(url)
    if isinstance(driver_error, sqlite3.Error) and path is not None:
        known = _SQLITE_CAUSES.get(getattr(driver_error, "sqlite_errorcode", -1) & 0xFF)
        if known is None:
            return None
        cause, fix = known
        folder = os.path.dirname(os.path.abspath(path))
        return (
            f"cannot write the study's database {path}: {cause} (SQLite: {driver_error}). "
            f"{_MEANWHILE} Fix: {fix.format(folder=folder)}; {_AFTER}"
        )
    cause = _POSTGRES_CAUSES.get(getattr(driver_error, "sqlstate", None) or "")
    if cause is None:
        return None
    return (
        f"cannot write the study's database {shown_url(url)}: {cause} (PostgreSQL: "
        f"{' '.join(str(driver_error).split())}). {_MEANWHILE} Fix: free space on the PostgreSQL "
        f"server's disk, or point [study] database at its primary; {_AFTER}"
    )


# PostgreSQL's SQLSTATEs of a server going away: admin_shutdown (a restart's "terminating
# connection due to administrator command"), crash_shutdown, cannot_connect_now ("the database
# system is starting up"), and class 08, connection_exception.
_GONE = {"57P01", "57P02", "57P03"}


def unreachable_message(error: BaseException, url: str | URL) -> str | None:
    """The operator's line for a request that failed because PostgreSQL could not be reached
    or dropped its connection (a restart, a crash, the network), naming the server and the
    fix; None for any other error. libpq's own words at connection time carry no SQLSTATE."""
    url = make_url(url)
    if url.get_backend_name() != "postgresql":
        return None
    import psycopg

    driver_error = getattr(error, "orig", None) or error
    if not isinstance(driver_error, psycopg.OperationalError):
        return None
    sqlstate = getattr(driver_error, "sqlstate", None)
    if sqlstate is not None and sqlstate not in _GONE and not sqlstate.startswith("08"):
        return None
    where = f"{url.host or 'the local socket'}:{url.port or 5432}"
    return (
        f"cannot reach the study's database {shown_url(url)}: PostgreSQL at {where} does not "
        f"answer or dropped the connection (PostgreSQL: {' '.join(str(driver_error).split())}). "
        f"{_MEANWHILE} Fix: start PostgreSQL there, or check that it answers from this machine "
        f"(`pg_isready -h {url.host or 'localhost'} -p {url.port or 5432}`) and the host and "
        f"port in [study] database; {_AFTER}"
    )


# libpq's words at connection time for a server that answered but is not taking connections yet
# or any more (57P03, 57P01), and for a host name that names no machine (a typo, so a refusal
# like a wrong password: waiting would not mend it).
_NOT_YET = re.compile(r"the database system is|terminating connection due to administrator command")
_NO_SUCH_HOST = "could not translate host name"


def does_not_answer(error: BaseException, url: str | URL) -> bool:
    """Whether `error` is PostgreSQL not answering (refused, the connection dropped, the server
    starting up or shutting down), which waiting may mend, rather than PostgreSQL refusing the
    study (a wrong password, a missing database or role: its FATAL, with its fix worded by
    study.store.engine), which it will not. At connection time libpq gives no SQLSTATE, so the
    server's own refusals are told apart by its "FATAL:" (in English, the default lc_messages)."""
    if unreachable_message(error, url) is None:
        return False
    driver_error = getattr(error, "orig", None) or error
    if getattr(driver_error, "sqlstate", None) is not None:
        return True  # 57P01-57P03 or class 08, as unreachable_message tells them
    words = str(driver_error)
    if _NO_SUCH_HOST in words:
        return False
    return "FATAL:" not in words or _NOT_YET.search(words) is not None


def _unwritable(path: str) -> list[str]:
    """The database's folder and file, those of them that cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    return [p for p in (folder, path) if os.path.exists(p) and not os.access(p, os.W_OK)]


def unwritable_at_start(url: str | URL) -> str | None:
    """Why a server must not start on this SQLite database, with the fix: its folder or file
    cannot be written (a file system remounted read-only after a disk error, a folder made
    read-only). SQLite opens such a database as long as its -wal and -shm files are there, as a
    server that was killed leaves them, so the server would start and refuse every writer;
    PostgreSQL and a database never made yet say nothing here (its folder is checked)."""
    path = sqlite_file(url)
    if path is None or not (unwritable := _unwritable(path)):
        return None
    return f"cannot serve the study: {_cannot_write(path, unwritable)}, then start the server again."


def disk_warning(url: str | URL) -> str | None:
    """`study status`'s warning for the operator when a SQLite database cannot be written, or
    its disk has less than LOW_DISK_BYTES free: a server meanwhile refuses every writer (503),
    and cannot record its own activity for `study status` either, which then reads as idle."""
    path = sqlite_file(url)
    if path is None or not os.path.exists(path):
        return None
    if unwritable := _unwritable(path):
        return f"Warning: {_cannot_write(path, unwritable)}."
    folder = os.path.dirname(os.path.abspath(path))
    free = shutil.disk_usage(folder).free
    if free >= LOW_DISK_BYTES:
        return None
    return (
        f"Warning: the disk holding {path} has {free / 2**20:.1f} MB free; once it is full, no "
        f"server can store anything and writers' work waits in their browsers. Fix: free space "
        f"on it (`df -h {folder}`)."
    )


def _cannot_write(path: str, unwritable: list[str]) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    return (
        f"{' and '.join(unwritable)} cannot be written (a read-only file system, as Linux "
        f"remounts one after a disk error, or permissions), so no writer's work could be stored. "
        f"Fix: make {folder} and the files in it writable by the user running the server (for a "
        f"file system remounted read-only: check the disk, `dmesg`, and remount it read-write)"
    )


def install(app: Flask, url: URL) -> None:
    lock = threading.Lock()
    logged = {"at": float("-inf"), "refused": 0}

    def refused(error: Exception):
        message = unwritable_message(error, url) or unreachable_message(error, url)
        if message is None:
            raise error  # anything else: Flask's own 500, logged with its traceback
        with lock:
            logged["refused"] += 1
            now = time.monotonic()
            due = now - logged["at"] >= LOG_EVERY_SECONDS
            if due:
                count, logged["at"], logged["refused"] = logged["refused"], now, 0
        if due:
            since = f" ({count} requests refused since the last such line)" if count > 1 else ""
            app.logger.error("%s%s", message, since)
        if request.path.startswith("/api/"):
            return jsonify(error=API_MESSAGE), 503
        return PAGE_MESSAGE, 503

    # The event API commits on the driver (study.store.transactions; on PostgreSQL its group
    # writer, study.store.group_commit), so its errors are the driver's own; SQLAlchemy wraps
    # the rest.
    kinds: list[type[Exception]] = [sqlite3.OperationalError, DBAPIError]
    if url.get_backend_name() == "postgresql":
        import psycopg  # PostgreSQL's driver: optional, and present when the URL names it

        kinds.append(psycopg.Error)
    for kind in kinds:
        app.register_error_handler(kind, refused)
