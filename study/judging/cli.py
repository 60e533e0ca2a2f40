"""`study judging`: build a judging round, read its results. Recruiting and paying its judges
(`study judging post`, `study judging review`) is MTurk's (study.mturk.cli.judging), added to
this group where the command line registers its groups (study.cli)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import click

from study import config as study_config
from study.judging import export as export_module
from study.judging import items as item_module
from study.judging import results
from study.judging import settings as judging_settings
from study.store import create_tables, make_engine, reading, writing
from study.store.engine import sqlite_file
from study.cli_options import directory_argument


def _study(directory: str):
    try:
        study = study_config.load(directory)
        return study, judging_settings.from_study(study)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None


def collect(study, settings) -> results.Results:
    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with reading(engine) as connection:
            return results.collect(connection, study, settings)
    finally:
        engine.dispose()


@click.group()
def judging() -> None:
    """A judging round: crowd judges rate the study's texts on a rubric ([judging] in study.toml)."""


@judging.command()
@directory_argument
def build(directory: str) -> None:
    """Make the round's items (finished texts, whole or split into sentences), gold items and
    balanced tasks; judges then enter at /judge of `study serve`."""
    study, settings = _study(directory)
    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with writing(engine) as connection:
            built = item_module.build(connection, study, settings)
    except item_module.BuildError as error:
        raise click.ClickException(str(error)) from None
    finally:
        engine.dispose()
    click.echo(
        f"Built a judging round of {built.items} {settings.unit} item(s) from {built.sessions} session(s), "
        f"{built.gold} gold item(s): {built.tasks} task(s), each item rated by {settings.k} judges."
    )
    if built.gold and built.gold < settings.gold_per_task:
        # The design puts each gold item in a task at most once (study.judging.design).
        click.echo(f"Each task carries {built.gold} gold item(s), not gold_per_task = {settings.gold_per_task}: "
                   f"{settings.gold} holds only {built.gold}. Fix: add known-answer texts to it, or lower "
                   "[judging] gold_per_task, and build again before any judge takes a task.")  # fmt: skip
    if built.simulated:
        click.echo(f"Left out {built.simulated} simulated session(s) (study simulate): judges rate what people wrote.")


@judging.command()
@directory_argument
def status(directory: str) -> None:
    """How the round is going: tasks, ratings, flagged judges, agreement."""
    study, settings = _study(directory)
    database = sqlite_file(study.database_url)
    if database is not None and not os.path.exists(database):
        # As `study status`: made here, an empty study.db would look like a study nobody joined.
        click.echo(f"No judging round: study '{study.name}' has not been served yet (no database at {database}). "
                   f"Fix: study judging build {directory}, once writers have finished.")  # fmt: skip
        return
    found = collect(study, settings)
    if not found.tasks:
        # Zeros under "Judging round:" would read as a round that nobody has judged yet.
        click.echo(f"No judging round built yet. Fix: study judging build {directory}, once writers have "
                   "finished (it reads [judging] in study.toml; README, Judging round).")  # fmt: skip
        return
    click.echo(f"Judging round: {found.items} {settings.unit} item(s), {found.tasks} task(s), "
               f"{found.tasks_submitted} submitted")  # fmt: skip
    if found.tasks_claimed:
        # Judges entering now are told nothing is left while these are held (study.judging.tasks).
        click.echo(f"Being rated: {found.tasks_claimed} task(s) taken and not submitted; one not submitted "
                   "within [mturk] assignment_minutes (default 60) of being taken goes to the next judge")  # fmt: skip
    judges = {r["judge"] for r in found.ratings} | set(found.checks)
    click.echo(f"Ratings kept: {len(found.kept)} of {len(found.ratings)}; judges {len(judges)}, "
               f"flagged by gold {len(found.flagged)}")  # fmt: skip
    a = found.agreement
    if a is None or math.isnan(a.alpha):
        click.echo("Krippendorff's alpha: not yet computable (too few items with two kept ratings, or one score only)")
    else:
        interval = "" if math.isnan(a.low) else f" (95% CI {a.low:.2f} to {a.high:.2f})"
        click.echo(f"Krippendorff's alpha ({settings.agreement_level}): {a.alpha:.2f}{interval} over {a.items} items")


@judging.command("export")
@directory_argument
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder.")
def export_command(directory: str, out: str) -> None:
    """Write the ratings joined to their sessions and arms (judging_*.csv, judging_rubric.json)."""
    study, settings = _study(directory)
    _check_paradigms_known(study)
    written = export_module.write(collect(study, settings), Path(out))
    click.echo(f"Wrote {written} ratings to {Path(out) / export_module.RATINGS_CSV}")


def _check_paradigms_known(study) -> None:
    """Refuse, as `study export` does, where the `paradigm` column could not be told: a session
    from before each session's paradigm was stored, in an arm whose paradigm changed since
    (study.export.as_run)."""
    from study.export import as_run
    from study.store import sessions as session_store

    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with reading(engine) as connection:
            as_run.check_known(study, session_store.all_sessions(connection, finished_only=True))
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    finally:
        engine.dispose()
