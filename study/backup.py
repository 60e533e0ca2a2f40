"""`study backup`: a consistent copy of a study's database, taken while `study serve` keeps
writing (SQLite: study.store.sqlite_backup; PostgreSQL: study.store.pg_backup)."""

from __future__ import annotations

from pathlib import Path

import click

from study import config as study_config
from study.status import database_shown


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="The backup's file (default: DIRECTORY/backups/study-<UTC time>.db, or .dump "
                   "for PostgreSQL).")
@click.option("--overwrite", is_flag=True, help="Replace the file at --out if there is one.")
def backup(directory: str, out: str | None, overwrite: bool) -> None:
    """Back up the database of the study in DIRECTORY while its servers run: SQLite's online
    backup (restore: put the file in place of study.db, servers stopped), or pg_dump's custom
    format for PostgreSQL (restore: pg_restore). Checked before it gets its name."""
    from study.store.backup import BackupError
    from study.store.engine import sqlite_file

    try:
        study = study_config.load(directory)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    database = sqlite_file(study.database_url)
    target = Path(out) if out is not None else None
    try:
        if database is not None:
            from study.store import sqlite_backup

            made = sqlite_backup.back_up(Path(database), study.directory, target, overwrite=overwrite)
        elif study.database_url.startswith("postgresql"):
            from study.store import pg_backup

            made = pg_backup.back_up(study.database_url, study.directory, target, overwrite=overwrite)
        else:
            raise BackupError(f"{database_shown(study)}: study backup knows SQLite files and PostgreSQL "
                              f"only. Fix: back it up with its own tools.")
    except BackupError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Backed up '{study.name}' ({database_shown(study)}) to {made.path}")
    click.echo(f"Sessions: {made.sessions}, events: {made.events}; {made.checked}")
