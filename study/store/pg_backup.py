"""`study backup` of a PostgreSQL study database: PostgreSQL's own pg_dump, in its custom
format (restored with pg_restore), taken while the servers write.

The dump reads a snapshot this module's transaction exports (`pg_dump --snapshot`), so the
sessions and events counted here are exactly those in the dump. The password never reaches
pg_dump's command line, which every user of the machine may read (`ps`): it goes in the
environment, as PGPASSWORD.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url

from study.store.backup import Backup, BackupError, default_path, written_then_placed
from study.store.db import events, sessions
from study.store.coordination import clock
from study.store.engine import make_engine, without_password

# Where Debian's postgresql-client packages put their tools, one folder per major version.
DEBIAN_TOOLS = Path("/usr/lib/postgresql")


def tool(name: str) -> str | None:
    """`name` on PATH, else the newest major version's under DEBIAN_TOOLS."""
    found = shutil.which(name)
    if found:
        return found
    versions = [path for path in DEBIAN_TOOLS.glob(f"*/bin/{name}") if os.access(path, os.X_OK)]
    newest = sorted(versions, key=lambda path: [int(part) for part in re.findall(r"\d+", path.parent.parent.name)])
    return str(newest[-1]) if newest else None


def libpq_target(url: str) -> tuple[str, str | None]:
    """The connection URI pg_dump takes (libpq's own, without SQLAlchemy's `+psycopg`), and the
    password apart from it: from the address (user:password@) or the query (`?password=`)."""
    parsed = make_url(url)
    if "sslpassword" in parsed.query:
        raise BackupError(
            "[study] database gives the client key's passphrase (sslpassword), which pg_dump could "
            "only be given on its command line, where anyone on this machine may read it. Fix: "
            "run pg_dump yourself with a key it can read without one."
        )
    password = parsed.password or parsed.query.get("password")
    if isinstance(password, tuple):  # a parameter given twice: libpq takes the last
        password = password[-1]
    return without_password(parsed), password


def back_up(url: str, directory: Path, out: Path | None = None, *, overwrite: bool = False) -> Backup:
    """A pg_dump archive of the database at `url`, at `out` (default: backups/study-<the
    database's time>.dump in the study `directory`), read back by pg_restore before it gets
    that name. Raises BackupError."""
    pg_dump = tool("pg_dump")
    if pg_dump is None:
        raise BackupError(
            "pg_dump was not found on PATH nor under /usr/lib/postgresql/*/bin. Fix: install "
            "PostgreSQL's client tools of the server's major version or later (Debian and Ubuntu: "
            "apt-get install postgresql-client), or put the folder holding pg_dump on PATH."
        )
    target, password = libpq_target(url)
    engine = make_engine(url, threads=1)
    try:
        with engine.connect() as connection:
            # A snapshot stays exportable only inside a transaction that sees one state
            # throughout; pg_dump reads that same state while this one stays open.
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                now = clock(connection)
                snapshot = connection.execute(text("SELECT pg_export_snapshot()")).scalar_one()
                stored_sessions = connection.execute(select(func.count()).select_from(sessions)).scalar_one()
                stored_events = connection.execute(select(func.count()).select_from(events)).scalar_one()
                out = Path(out) if out is not None else default_path(directory, now, ".dump")
                with written_then_placed(out, overwrite) as partial:
                    _dump(pg_dump, target, password, snapshot, partial)
                    checked = _read_back(partial, password)
    finally:
        engine.dispose()
    return Backup(path=out, sessions=stored_sessions, events=stored_events, checked=checked)


def _dump(pg_dump: str, target: str, password: str | None, snapshot: str, partial: Path) -> None:
    environment = dict(os.environ)
    if password is not None:
        environment["PGPASSWORD"] = password
    command = [pg_dump, "--format=custom", f"--file={partial}", f"--snapshot={snapshot}",
               "--no-password",  # never a prompt: a backup run from cron would wait forever
               f"--dbname={target}"]  # fmt: skip
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return
    said = _hidden(" ".join(done.stderr.split()), password) or f"exit status {done.returncode}"
    if "version mismatch" in said:
        fix = ("install pg_dump of the server's major version or later (Debian: apt-get install "
               "postgresql-client-NN), or put its folder first on PATH")
    elif "could not write to output file" in said or done.returncode == -signal.SIGXFSZ:
        # The backup's own disk (or a file size limit, `ulimit -f`), not the database: the
        # usual fix for pg_dump's failures would send the operator to the wrong machine.
        folder = partial.parent
        fix = (f"free space on the disk holding {folder} (`df -h {folder}`), or give --out a file "
               f"on a disk with room for the whole database")
    else:
        fix = "check that the database named by [study] database in study.toml answers, and its user may read every table"
    raise BackupError(f"pg_dump failed: {said} Nothing was left under the backup's name. Fix: {fix}.")


def _read_back(archive: Path, password: str | None) -> str:
    """pg_restore reads the archive's table of contents, as a restore would begin."""
    pg_restore = tool("pg_restore")
    if pg_restore is None:
        return "not read back: pg_restore was not found"
    done = subprocess.run([pg_restore, "--list", str(archive)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = _hidden(" ".join(done.stderr.split()), password)
        raise BackupError(f"pg_restore cannot read the archive pg_dump wrote ({said}); it was not kept. "
                          f"Fix: use a pg_restore of the same version as pg_dump ({tool('pg_dump')}).")
    entries = sum(1 for line in done.stdout.splitlines() if line.strip() and not line.startswith(";"))
    return f"pg_restore --list read its {entries} entries"


def _hidden(said: str, password: str | None) -> str:
    return said.replace(password, "***") if password else said
