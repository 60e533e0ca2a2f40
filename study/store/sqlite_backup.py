"""`study backup` of a SQLite study database (study.db), taken while `study serve` writes.

Copying study.db with `cp` while the servers run gives a torn file: the newest commits are in
study.db-wal until a checkpoint copies them across (study.store.checkpoints), and a checkpoint
may write into study.db halfway through the copy. SQLite's online backup API reads the
database as one read transaction sees it, WAL included, and writes it page by page into
another file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from study.store.backup import Backup, BackupError, default_path, written_then_placed

# A reader waits this long behind SQLite's recovery of a WAL left by a killed server.
BUSY_SECONDS = 30


def back_up(database: Path, directory: Path, out: Path | None = None, *, overwrite: bool = False) -> Backup:
    """A consistent copy of `database` at `out` (default: backups/study-<UTC time>.db in the
    study `directory`), checked before it gets that name. Raises BackupError."""
    database = Path(database)
    if not database.is_file():
        raise BackupError(f"{database} does not exist: the study has not been served yet, so there "
                          f"is nothing to back up.")
    out = Path(out) if out is not None else default_path(directory, time.time(), ".db")
    _not_the_database(database, out)
    with written_then_placed(out, overwrite) as partial:
        try:
            return _copied(database, partial, out)
        except sqlite3.Error as error:
            raise BackupError(f"the backup to {out} failed while copying ({error}); nothing was left "
                              f"under that name. Fix: free space where it goes (a backup is about as "
                              f"large as {database.name} and its -wal file), then run it again.") from None
        finally:
            # The journal SQLite keeps beside the copy while writing it, left by a copy cut short.
            for end in ("-journal", "-wal", "-shm"):
                partial.with_name(partial.name + end).unlink(missing_ok=True)


def _copied(database: Path, partial: Path, out: Path) -> Backup:
    source = sqlite3.connect(_source_uri(database), uri=True, timeout=BUSY_SECONDS)
    with closing(source), closing(sqlite3.connect(partial)) as copy:
        # All pages in one step, in one read transaction: a WAL reader holds up no writer, and
        # a copy taken in several steps starts over whenever another process commits between
        # them, which the servers of a running study always do.
        source.backup(copy, pages=-1)
        # The copy is one file, readable without its -wal and -shm: the servers switch it back
        # to WAL when they open it in place of study.db.
        copy.execute("PRAGMA journal_mode=DELETE")
        return _checked(copy, out)


def _source_uri(database: Path) -> str:
    """How the copy's reader opens the study database. mode=rw: a database that went away is
    not made again, empty, by it. In a folder that cannot be written (a disk Linux remounted
    read-only after an error, when a backup is needed most) SQLite cannot make the -wal and
    -shm files a reader of a WAL database uses, and said only "unable to open database file":
    nothing can write there, so study.db alone, with no -wal beside it, is read as immutable,
    and with a killed server's -wal and -shm read-only, which SQLite can do as long as both are
    there."""
    uri = f"file:{quote(str(database))}"
    if os.access(database.parent, os.W_OK):
        return uri + "?mode=rw"
    wal = database.with_name(database.name + "-wal")
    if not wal.exists() or wal.stat().st_size == 0:
        return uri + "?mode=ro&immutable=1"
    if not database.with_name(database.name + "-shm").exists():
        raise BackupError(
            f"{database.parent} cannot be written and {wal.name} beside {database.name} holds "
            f"commits not yet in it, which SQLite cannot read without making {database.name}-shm "
            f"there. Fix: copy its files as they are (cp -p {database}* to a folder you can "
            f"write; no server can be writing them meanwhile) and back up the copy."
        )
    return uri + "?mode=ro"


def _checked(copy: sqlite3.Connection, out: Path) -> Backup:
    problems = [row[0] for row in copy.execute("PRAGMA integrity_check").fetchall()]
    if problems != ["ok"]:
        raise BackupError(f"the copy for {out} failed SQLite's integrity_check ({'; '.join(problems[:3])}), "
                          f"and was not kept. Fix: run `PRAGMA integrity_check` on the study database "
                          f"itself; if it fails too, the database is damaged.")
    try:
        (sessions,) = copy.execute("SELECT count(*) FROM sessions").fetchone()
        (events,) = copy.execute("SELECT count(*) FROM events").fetchone()
    except sqlite3.OperationalError as error:  # e.g. "no such table: sessions"
        raise BackupError(f"the database copied for {out} is not a study's database ({error}); "
                          f"nothing was kept.") from None
    return Backup(path=out, sessions=sessions, events=events, checked="integrity_check ok")


def _not_the_database(database: Path, out: Path) -> None:
    """--out naming the database itself (or its WAL) would, with --overwrite, replace the live
    study under its servers."""
    own = {database.resolve(), *(database.resolve().with_name(database.name + end) for end in ("-wal", "-shm", "-lock"))}
    if out.resolve() in own:
        raise BackupError(f"--out {out} is the study's database itself. Fix: give the backup a file "
                          f"name of its own.")
