"""`study backup` of a SQLite study database (study.db), taken while `study serve` writes.

Copying study.db with `cp` while the servers run gives a torn file: the newest commits are in
study.db-wal until a checkpoint copies them across (study.store.checkpoints), and a checkpoint
may write into study.db halfway through the copy. SQLite's online backup API reads the
database as one read transaction sees it, WAL included, and writes it page by page into
another file.
"""

from __future__ import annotations

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
    # mode=rw: a database that went away is not made again, empty, by the copy's reader.
    source = sqlite3.connect(f"file:{quote(str(database))}?mode=rw", uri=True, timeout=BUSY_SECONDS)
    with closing(source), closing(sqlite3.connect(partial)) as copy:
        # All pages in one step, in one read transaction: a WAL reader holds up no writer, and
        # a copy taken in several steps starts over whenever another process commits between
        # them, which the servers of a running study always do.
        source.backup(copy, pages=-1)
        # The copy is one file, readable without its -wal and -shm: the servers switch it back
        # to WAL when they open it in place of study.db.
        copy.execute("PRAGMA journal_mode=DELETE")
        return _checked(copy, out)


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
