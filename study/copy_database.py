"""`study copy-database`: a study piloted on SQLite moved into an empty PostgreSQL database
(study.store.copy_database), to be served from several hosts; study.toml is left to the
researcher, who is shown the line to put in it."""

from __future__ import annotations

import click

from study import config as study_config
from study.status import database_shown
from study.store.engine import sqlite_file


@click.command("copy-database")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--to", "to", required=True, metavar="postgresql://USER@HOST:PORT/DBNAME",
              help="The empty PostgreSQL database to copy into. Leave the password out of it and "
                   "give it as PGPASSWORD (or in ~/.pgpass): a command line is visible to every "
                   "user of the machine.")
def copy_database(directory: str, to: str) -> None:
    """Copy the SQLite database of the study in DIRECTORY (study.db), every table, into an empty
    PostgreSQL database in one transaction, its servers stopped; then print the row counts read
    back and the [study] database line for study.toml (which is not changed)."""
    from study.store.copy_database import CopyError, copy_database as copied_into

    try:
        study = study_config.load(directory)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    pilot = study.directory / "study.db"
    if sqlite_file(study.database_url) is None and pilot.is_file():
        # The README's order invites it: [study] database set to PostgreSQL first, and the
        # pilot's study.db, still in the folder, is what to copy.
        raise click.ClickException(
            f"[study] database in {study.directory / study_config.CONFIG_NAME} already names "
            f"{database_shown(study)}, not a SQLite file: this command copies the database it names, "
            f"which must be the pilot's study.db. Nothing was copied. Fix: to copy {pilot}, set [study] "
            f"database = \"\" again, run this command, then set [study] database to the line it prints."
        )
    try:
        made = copied_into(study.database_url, to)
    except CopyError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Copied '{study.name}' from {database_shown(study)} to {made.target} in one transaction.")
    click.echo("Rows, read back from PostgreSQL after the commit (the same as in study.db):")
    width = max(len(name) for name in made.rows)
    # The participants' sessions and events first, then every other table by name.
    for name, count in sorted(made.rows.items(), key=lambda item: (item[0] not in ("sessions", "events"), item[0] != "sessions", item[0])):
        if count:
            click.echo(f"  {name:<{width}}  {count:>9,}")
    empty = sum(1 for count in made.rows.values() if not count)
    if empty:
        click.echo(f"  ({empty} other tables empty in both)")
    for name in made.not_copied:
        click.echo(f"Not copied: table {name} of study.db, which this version of study does not know.")
    config = study.directory / study_config.CONFIG_NAME
    click.echo(f"\nTo serve the study from PostgreSQL, stop its servers and set in {config} (not changed "
               f"by this command):\n\n  [study]\n  database = \"{made.database}\"\n")
    if made.password_given:
        click.echo("Put the database password in place of PASSWORD, or leave ':PASSWORD' out and give "
                   "every host the password as PGPASSWORD or in ~/.pgpass, where PostgreSQL's client "
                   "library finds it.")
    click.echo(f"{database_shown(study)} is left as it was: keep it as the pilot's record.")
